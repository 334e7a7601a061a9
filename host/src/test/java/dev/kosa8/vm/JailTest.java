package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link Jail#wrap}: the bubblewrap command line around QEMU's, for a user and for root. */
class JailTest {
    static final List<Jail.SystemPath> SYSTEM = List.of(new Jail.SystemPath(Path.of("/usr"), null),
            new Jail.SystemPath(Path.of("/bin"), "usr/bin"), new Jail.SystemPath(Path.of("/lib"), "usr/lib"),
            new Jail.SystemPath(Path.of("/etc/ld.so.cache"), null));
    static final Jail AS_USER = new Jail(Path.of("/usr/bin/bwrap"), true, false, SYSTEM, false, "", "");
    static final Jail AS_ROOT = new Jail(Path.of("/usr/bin/bwrap"), false, true, SYSTEM, false, "", "");
    static final List<Path> BACKING = List.of(Path.of("/home/u/.local/share/kosa8/templates/t1/disk.qcow2"),
            Path.of("/home/u/.local/share/kosa8/images/rootfs/ab12/rootfs.qcow2"));

    static VmSpec spec(Accelerator accel, boolean network) {
        Path run = Path.of("/run/user/1000/kosa8/abc123abc123");
        return new VmSpec("abc123abc123", accel, 2, 1024, Path.of("/home/u/.local/share/kosa8/images/kernel/vmlinux"),
                Path.of("/home/u/.local/share/kosa8/images/initramfs/initramfs.cpio"),
                Path.of("/home/u/.local/share/kosa8/sandboxes/abc123abc123/root.qcow2"), "console=ttyS0",
                Path.of("/home/u/.local/share/kosa8/sandboxes/abc123abc123/console.log"), run.resolve("alt/qmp.sock"),
                run.resolve("alt/agent.sock"), run.resolve("alt/ws9p.sock"),
                network ? run.resolve("alt/net.sock") : null);
    }

    /** Every {@code --flag SRC DEST} of the jail's command line, as "flag SRC DEST". */
    static List<String> binds(List<String> argv) {
        List<String> binds = new ArrayList<>();
        for (int i = 0; i < argv.indexOf("--"); i++) {
            String a = argv.get(i);
            if (a.equals("--bind") || a.equals("--ro-bind") || a.equals("--dev-bind") || a.equals("--symlink")) {
                binds.add(a + " " + argv.get(i + 1) + " " + argv.get(i + 2));
                i += 2;
            }
        }
        return binds;
    }

    @Test
    void aBuildSandboxsLayerFolderBesideItsRootDiskIsShownWritableAndNoOtherSandboxGetsOne(
            @org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        VmSpec s = spec(Accelerator.TCG, true);
        Path disk = dir.resolve("sandboxes/abc123abc123/root.qcow2");
        VmSpec at = new VmSpec(s.name(), s.accelerator(), s.cpus(), s.memoryMiB(), s.kernel(), s.initramfs(), disk,
                s.kernelArgs(), s.consoleLog(), s.qmpSocket(), s.agentSocket(), s.workspaceSocket(), s.netSocket());
        java.nio.file.Files.createDirectories(disk.getParent());
        List<String> qemu = QemuCommandLine.of(at, "/usr/bin/qemu-system-x86_64");
        Path layers = disk.resolveSibling(Jail.BUILD_LAYERS);
        assertThat(binds(AS_USER.wrap(at, BACKING, qemu))).as("no such folder: nothing more shown")
                .noneMatch(b -> b.contains(Jail.BUILD_LAYERS));
        java.nio.file.Files.createDirectories(layers);
        assertThat(binds(AS_USER.wrap(at, BACKING, qemu))).contains("--bind " + layers + " " + layers)
                .noneMatch(b -> b.startsWith("--bind " + disk.getParent() + " "));
        // a link named so is not followed: only a folder the daemon made is shown
        java.nio.file.Files.delete(layers);
        java.nio.file.Files.createSymbolicLink(layers, dir);
        assertThat(binds(AS_USER.wrap(at, BACKING, qemu))).noneMatch(b -> b.contains(Jail.BUILD_LAYERS));
    }

    @Test
    void aMachineWhoseRamIsAFileSeesThatFileAloneWritable() {
        Path memory = Path.of("/home/u/.local/share/kosa8/sandboxes/abc123abc123/memory/alt");
        VmSpec spec = spec(Accelerator.TCG, true).withMemoryFile(memory);
        List<String> argv = AS_USER.wrap(spec, BACKING, QemuCommandLine.of(spec, "/usr/bin/qemu-system-x86_64"));
        assertThat(binds(argv)).contains("--bind " + memory + " " + memory);
        assertThat(String.join(" ", binds(argv))).as("not the other machine's file beside it, nor the checkpoints'"
                + " copies").doesNotContain("memory/main").doesNotContain("memory ").doesNotContain("checkpoints");
    }

    @Test
    void aUsersQemuGetsEveryNamespaceAndSeesOnlyItsOwnFilesUnderTheirOwnNames() {
        VmSpec spec = spec(Accelerator.TCG, true);
        List<String> qemu = QemuCommandLine.of(spec, "/usr/bin/qemu-system-x86_64");
        List<String> argv = AS_USER.wrap(spec, BACKING, qemu);

        assertThat(argv.getFirst()).isEqualTo("/usr/bin/bwrap");
        assertThat(argv.subList(argv.indexOf("--") + 1, argv.size())).as("QEMU's own command line, unchanged")
                .isEqualTo(qemu);
        List<String> jail = argv.subList(0, argv.indexOf("--"));
        assertThat(jail).contains("--new-session", "--unshare-user", "--unshare-pid", "--unshare-ipc",
                "--unshare-net", "--unshare-uts").containsSequence("--cap-drop", "ALL")
                .containsSequence("--dev", "/dev").containsSequence("--proc", "/proc").containsSequence("--chdir", "/");
        assertThat(jail).as("QEMU outlives the daemon").doesNotContain("--die-with-parent", "--share-net")
                .doesNotContain("--cap-add");
        String home = "/home/u/.local/share/kosa8";
        assertThat(binds(argv)).containsExactlyInAnyOrder(
                "--ro-bind /usr /usr", "--symlink usr/bin /bin", "--symlink usr/lib /lib",
                "--ro-bind /etc/ld.so.cache /etc/ld.so.cache",
                "--ro-bind " + home + "/images/kernel/vmlinux " + home + "/images/kernel/vmlinux",
                "--ro-bind " + home + "/images/initramfs/initramfs.cpio " + home + "/images/initramfs/initramfs.cpio",
                "--ro-bind " + BACKING.get(0) + " " + BACKING.get(0),
                "--ro-bind " + BACKING.get(1) + " " + BACKING.get(1),
                "--bind " + home + "/sandboxes/abc123abc123/root.qcow2 " + home + "/sandboxes/abc123abc123/root.qcow2",
                "--bind /run/user/1000/kosa8/abc123abc123/alt /run/user/1000/kosa8/abc123abc123/alt");
        assertThat(String.join(" ", binds(argv))).as("nothing else of the sandbox's folder: not its record, CA"
                + " key, console log or checkpoints").doesNotContain("sandbox.json").doesNotContain("/ca")
                .doesNotContain("console.log").doesNotContain("checkpoints").doesNotContain("/dev/kvm");
        assertThat(binds(argv)).as("the network link's socket is in the machine's own folder; the broker's"
                + " folder is not shown, the daemon alone connects to it").noneMatch(b -> b.contains("/net"));
        assertThat(argv).as("no relay program to show: QEMU starts none").noneMatch(a -> a.contains("socat"));
    }

    @Test
    void rootMakesTheNamespacesWithoutAUserNamespaceAndKeepsOnlyWhatUserfaultfdNeeds() {
        VmSpec spec = spec(Accelerator.KVM, false);
        List<String> qemu = QemuCommandLine.of(spec, "/usr/bin/qemu-system-x86_64");
        List<String> argv = AS_ROOT.wrap(spec, List.of(), qemu);
        List<String> jail = argv.subList(0, argv.indexOf("--"));
        assertThat(jail).doesNotContain("--unshare-user").contains("--unshare-pid", "--unshare-ipc", "--unshare-net",
                "--unshare-uts", "--new-session").containsSequence("--cap-drop", "ALL", "--cap-add", "CAP_SYS_PTRACE");
        assertThat(binds(argv)).as("KVM's device, and no broker sockets without a network")
                .contains("--dev-bind /dev/kvm /dev/kvm").noneMatch(b -> b.contains("/net"));
        assertThat(argv.subList(argv.indexOf("--") + 1, argv.size())).isEqualTo(qemu);
    }

    @Test
    void foldersInsideTheRuntimeFolderAreMountedAfterItTheBrokersAndTheOtherMachinesCovered() {
        Path run = Path.of("/run/user/1000/kosa8/abc123abc123");
        VmSpec s = spec(Accelerator.TCG, true);
        VmSpec inRun = new VmSpec(s.name(), s.accelerator(), s.cpus(), s.memoryMiB(), s.kernel(), s.initramfs(),
                s.rootDisk(), s.kernelArgs(), s.consoleLog(), run.resolve("qmp.sock"), run.resolve("agent.sock"),
                run.resolve("ws9p.sock"), run.resolve("net.sock"));
        List<String> argv = AS_USER.wrap(inRun, List.of(), List.of(run.resolve("alt"), run.resolve("net")),
                List.of("/usr/bin/qemu"));
        String joined = String.join(" ", argv);
        int outer = joined.indexOf("--bind " + run + " " + run);
        int broker = joined.indexOf("--tmpfs " + run + "/net");
        int other = joined.indexOf("--tmpfs " + run + "/alt");
        assertThat(outer).as(joined).isPositive();
        assertThat(joined).as("the network link's socket beside the others, read-write; the broker's folder not"
                + " shown").doesNotContain("-bind " + run + "/net");
        assertThat(broker).as("the broker's folder covered over the runtime folder's view of it").isGreaterThan(outer);
        assertThat(other).as("the other machine's folder covered").isGreaterThan(outer);
    }

    @Test
    void aProgramOutsideTheSystemFoldersIsShownAloneAndReadOnly() {
        VmSpec spec = spec(Accelerator.TCG, false);
        List<String> argv = AS_USER.wrap(spec, List.of(), List.of("/opt/qemu/bin/qemu-system-x86_64", "-m", "1G"));
        assertThat(binds(argv)).contains("--ro-bind /opt/qemu/bin/qemu-system-x86_64 /opt/qemu/bin/qemu-system-x86_64");
        assertThat(binds(AS_USER.wrap(spec, List.of(), List.of("/usr/bin/qemu-system-x86_64"))))
                .noneMatch(b -> b.contains("qemu-system"));
    }

    @Test
    void withoutAJailQemuRunsAsItIsUnlessTheJailIsRequired() {
        VmSpec spec = spec(Accelerator.TCG, true);
        List<String> qemu = QemuCommandLine.of(spec, "qemu");
        assertThat(Jail.NONE.wrap(spec, BACKING, qemu)).isEqualTo(qemu);
        Jail missing = Jail.unavailable("bubblewrap (bwrap) is not installed", "sudo apt-get install bubblewrap", false);
        assertThat(missing.wrap(spec, BACKING, qemu)).isEqualTo(qemu);
        assertThat(missing.describe()).contains("without its jail").contains("not installed");
        Jail required = Jail.unavailable("bubblewrap (bwrap) is not installed", "sudo apt-get install bubblewrap", true);
        assertThatThrownBy(() -> required.wrap(spec, BACKING, qemu)).isInstanceOf(KosaException.class)
                .hasMessageContaining("must run in its jail").hasMessageContaining("not installed")
                .satisfies(e -> assertThat(((KosaException) e).suggestion()).contains("apt-get install bubblewrap")
                        .contains("\"jail\": \"auto\""));
    }
}
