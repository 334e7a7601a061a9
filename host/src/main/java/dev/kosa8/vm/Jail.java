package dev.kosa8.vm;

import dev.kosa8.host.KosaException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The jail every sandbox's QEMU runs in: bubblewrap ({@code bwrap}) gives it
 * namespaces of its own, in which it sees only what it needs. Building the
 * command line is a pure function ({@link #wrap}); finding out whether this
 * host can make the jail is {@link JailProbe}'s.
 *
 * <p>What QEMU sees, and nothing else (docs/design.md, "Decisions"):
 * <ul>
 *   <li>read-only: the host's programs and libraries ({@link #system}: {@code /usr}, the {@code /lib*} and
 *       {@code /bin} links or folders, the loader's cache), the kernel, the initramfs and every file the root
 *       disk rests on ({@link DiskChain}: a template's disk, the image's root file system);</li>
 *   <li>read-write: the sandbox's root disk, and the machine's own runtime folder (its monitor, agent,
 *       workspace, network link and console sockets, the workspace's and the network's window files, the
 *       sockets a checkpoint's state goes out and a restore's comes in by);</li>
 *   <li>a {@code /dev} of its own ({@code null}, {@code zero}, {@code urandom}, ...; {@code /dev/kvm} under
 *       KVM) and a {@code /proc} of its own PID namespace.</li>
 * </ul>
 * Not the user's home, other sandboxes, the sandbox's own record and CA
 * key, the daemon's socket, the egress broker's sockets, kosa8's secrets, nor the host's network: it has
 * a network namespace of its own with only a loopback device (the guest's
 * network is the network link's virtio-serial port, a unix socket in the
 * machine's folder that the daemon joins to the broker; QEMU itself opens no
 * connection and starts no program). Its IPC, UTS and cgroup namespaces are its own too;
 * it leads a session of its own; every capability is dropped.
 *
 * <p>Its PID namespace: bubblewrap's own first child is PID 1 there and
 * QEMU its child, reaped by it; {@link QemuProcess} records that first
 * child, so killing the recorded process ends the namespace and QEMU with
 * it, and a restarted daemon finds it by pid and start time as before. The
 * jail is not tied to the daemon ({@code --die-with-parent} is not used):
 * QEMU outlives a daemon restart.
 *
 * @param bwrap         the bubblewrap program; null when QEMU runs unjailed
 * @param userNamespace make a user namespace (a user without privileges needs one to make the others; root
 *                      makes them without it)
 * @param keepPtrace    keep {@code CAP_SYS_PTRACE}: for root on a host whose {@code vm.unprivileged_userfaultfd}
 *                      is 0, where QEMU may use userfaultfd (a checkpoint's background snapshot, a lazy
 *                      restore) only with it; it reaches no process outside the jail's PID namespace
 * @param system        what of the host's file system QEMU's program and libraries need, read-only
 * @param required      refuse to start QEMU unjailed (a host-side setting)
 * @param unavailable   when {@code bwrap} is null: why there is no jail
 * @param fix           when {@code bwrap} is null: what would give one
 */
public record Jail(Path bwrap, boolean userNamespace, boolean keepPtrace, List<SystemPath> system, boolean required,
                   String unavailable, String fix) {

    /**
     * The folder beside a build sandbox's root disk in which its steps'
     * layers are made while its QEMU runs (the daemon's {@code BuildSandbox}):
     * where it exists, the jail shows it, writable, so that QEMU can open each
     * new layer; the daemon makes it for build sandboxes alone, before their
     * QEMU starts, and a guest cannot make it.
     */
    public static final String BUILD_LAYERS = "build-layers";

    /**
     * A top-level piece of the host's system tree shown to QEMU: a folder or
     * file bound read-only, or a symbolic link made again ({@code /lib ->
     * usr/lib} on a merged-/usr system).
     *
     * @param linkTarget the link's target, or null to bind the path itself
     */
    public record SystemPath(Path path, String linkTarget) {
        public SystemPath {
            if (!path.isAbsolute()) {
                throw new IllegalArgumentException("a system path must be absolute: " + path);
            }
        }
    }

    /** No jail, not required: what a machine built without a host's settings gets (tests, benchmarks). */
    public static final Jail NONE = new Jail(null, false, false, List.of(), false, "no jail was asked for", "");

    public Jail {
        system = List.copyOf(system);
        unavailable = unavailable == null ? "" : unavailable;
        fix = fix == null ? "" : fix;
    }

    /** A host without the jail: QEMU runs unjailed, or with {@code required} not at all. */
    public static Jail unavailable(String why, String fix, boolean required) {
        return new Jail(null, false, false, List.of(), required, why, fix);
    }

    /** Whether QEMU runs in the jail. */
    public boolean confines() {
        return bwrap != null;
    }

    /** One line for logs and {@code kosa8 doctor}: the namespaces QEMU gets, or why it has none. */
    public String describe() {
        if (bwrap == null) {
            return "QEMU runs without its jail: " + unavailable;
        }
        return "QEMU runs in a bubblewrap jail: mount, " + (userNamespace ? "user, " : "") + "PID, IPC, network, UTS"
                + " and cgroup namespaces of its own, every capability dropped"
                + (keepPtrace ? " but CAP_SYS_PTRACE (userfaultfd, as root)" : "");
    }

    /**
     * The command line that runs {@code argv} (QEMU's, from {@link
     * QemuCommandLine#of}) in this jail for the machine {@code spec}, whose
     * root disk rests on {@code backing} ({@link DiskChain#backingFiles}).
     * Every path keeps its name inside, so QEMU's own command line is
     * unchanged. Without a jail, {@code argv} itself, or, when the jail is
     * required, a refusal that says why and what to do.
     */
    public List<String> wrap(VmSpec spec, List<Path> backing, List<String> argv) {
        return wrap(spec, backing, List.of(), argv);
    }

    /**
     * As {@link #wrap(VmSpec, List, List)}, with {@code hidden}: folders
     * inside the ones shown that QEMU must not see (another QEMU's of the same
     * sandbox, the broker's), each covered by an empty tmpfs. Folders are
     * mounted outer first, so a hidden one inside a shown one covers the outer
     * one's view of it.
     */
    public List<String> wrap(VmSpec spec, List<Path> backing, List<Path> hidden, List<String> argv) {
        if (bwrap == null) {
            if (required) {
                throw new KosaException(KosaException.Kind.HOST, "QEMU must run in its jail on this host, and the"
                        + " jail cannot be made: " + unavailable, (fix.isEmpty() ? "" : fix + "; or ")
                        + "allow QEMU to run unjailed with \"jail\": \"auto\" in kosa8's settings.json");
            }
            return argv;
        }
        List<String> a = namespaces();
        if (spec.accelerator() == Accelerator.KVM) {
            a.addAll(List.of("--dev-bind", "/dev/kvm", "/dev/kvm"));
        }
        Set<Path> readOnly = new LinkedHashSet<>();
        for (String program : programs(spec, argv)) {
            Path p = Path.of(program);
            if (p.isAbsolute() && !shown(p)) {
                readOnly.add(p);
            }
        }
        readOnly.add(spec.kernel());
        readOnly.add(spec.initramfs());
        readOnly.addAll(backing);
        Set<Path> readWrite = new LinkedHashSet<>();
        readWrite.add(spec.rootDisk());
        if (spec.memoryFile() != null) {
            readWrite.add(spec.memoryFile()); // the file alone: the sandbox's other machine's is beside it
        }
        readWrite.add(spec.qmpSocket().getParent());
        readWrite.add(spec.agentSocket().getParent());
        if (spec.workspaceSocket() != null) {
            readWrite.add(spec.workspaceSocket().getParent());
        }
        if (spec.netSocket() != null) {
            readWrite.add(spec.netSocket().getParent());
        }
        Path buildLayers = spec.rootDisk().resolveSibling(BUILD_LAYERS);
        if (Files.isDirectory(buildLayers, LinkOption.NOFOLLOW_LINKS)) {
            readWrite.add(buildLayers);
        }
        readOnly.removeAll(readWrite);
        record Mount(String how, Path path) {
        }
        List<Mount> mounts = new ArrayList<>();
        readWrite.forEach(p -> mounts.add(new Mount("--bind", p)));
        readOnly.forEach(p -> mounts.add(new Mount("--ro-bind", p)));
        hidden.forEach(p -> mounts.add(new Mount("--tmpfs", p)));
        mounts.sort(java.util.Comparator.comparingInt(m -> m.path().getNameCount())); // stable: outer first
        for (Mount m : mounts) {
            a.add(m.how());
            if (!m.how().equals("--tmpfs")) {
                a.add(m.path().toString());
            }
            a.add(m.path().toString());
        }
        a.addAll(List.of("--chdir", "/", "--"));
        a.addAll(argv);
        return List.copyOf(a);
    }

    /**
     * The jail's namespaces and its system view, as every command line of
     * it begins: what {@link JailProbe} tries before QEMU ever runs in it.
     */
    List<String> namespaces() {
        List<String> a = new ArrayList<>();
        a.add(bwrap.toString());
        a.add("--new-session");
        if (userNamespace) {
            a.add("--unshare-user");
        }
        a.addAll(List.of("--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"));
        a.addAll(List.of("--cap-drop", "ALL"));
        if (keepPtrace) {
            a.addAll(List.of("--cap-add", "CAP_SYS_PTRACE"));
        }
        for (SystemPath p : system) {
            if (p.linkTarget() != null) {
                a.addAll(List.of("--symlink", p.linkTarget(), p.path().toString()));
            } else {
                a.addAll(List.of("--ro-bind", p.path().toString(), p.path().toString()));
            }
        }
        a.addAll(List.of("--dev", "/dev", "--proc", "/proc"));
        return a;
    }

    /** The programs the jail runs: QEMU's binary alone (its seccomp filter lets it start none). */
    private static List<String> programs(VmSpec spec, List<String> argv) {
        return List.of(argv.getFirst());
    }

    /** Whether a host path is inside what {@link #system} shows already. */
    private boolean shown(Path p) {
        for (SystemPath s : system) {
            if (s.linkTarget() == null && p.startsWith(s.path())) {
                return true;
            }
        }
        return false;
    }
}
