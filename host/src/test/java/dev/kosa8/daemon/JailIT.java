package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.kosa8.host.HostPaths;
import dev.kosa8.it.Kosa;
import dev.kosa8.vm.Jail;
import dev.kosa8.vm.JailProbe;
import dev.kosa8.vm.QemuProcess;
import dev.kosa8.vm.Vm;
import dev.kosa8.vm.VmSpec;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * QEMU in its jail ({@link Jail}): real sandboxes of every network mode run
 * in it, and a probe run in exactly the jail a sandbox's QEMU gets (the
 * daemon's own spec of the sandbox, wrapped by the same {@link Vm#jailed},
 * started by the same {@link QemuProcess#start}) reaches none of what the
 * jail keeps from QEMU: the user's SSH keys, another sandbox's disk, kosa8's
 * secrets, the daemon's socket, the egress broker's sockets, the network. The probe also does what QEMU
 * must be able to (read its kernel, write its disk and runtime folder), so
 * a probe that could do nothing at all fails the test.
 *
 * <p>In the daemon's package to build the spec the daemon builds
 * ({@link MachineSpecs}); runs the real CLI like every IT.
 */
class JailIT {
    static final Duration T = Duration.ofMinutes(10);
    static final Map<String, String> SANDBOXES = new LinkedHashMap<>(); // network mode -> id
    static Path workspaces;

    @BeforeAll
    static void create() throws Exception {
        workspaces = Kosa.HOME.resolveSibling("it-workspaces").resolve("JailIT");
        if (Files.exists(workspaces)) {
            Kosa.deleteTree(workspaces);
        }
        for (String mode : List.of("closed", "open", "none")) {
            Path folder = Files.createDirectories(workspaces.resolve(mode)).toRealPath();
            SANDBOXES.put(mode, Kosa.ok(T, "create", "--net", mode, "--workspace", folder.toString()).stdout().strip());
        }
    }

    @AfterAll
    static void remove() throws Exception {
        for (String id : SANDBOXES.values()) {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
        }
        if (workspaces != null && Files.exists(workspaces)) {
            Kosa.deleteTree(workspaces);
        }
    }

    static HostPaths paths() {
        return new HostPaths(Kosa.HOME.resolve("data"), Kosa.HOME.resolve("cache"), Kosa.HOME.resolve("run"));
    }

    static long qemuPid(String id) {
        String inspect = Kosa.ok(Duration.ofMinutes(1), "inspect", id).stdout();
        return Long.parseLong(inspect.replaceAll("(?s).*\"qemuPid\" : (\\d+).*", "$1"));
    }

    static String ns(long pid, String ns) throws Exception {
        return Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "ns", ns)).toString();
    }

    @Test
    void qemuRunsInItsJailWithAClosedAnOpenAndNoNetwork() throws Exception {
        long daemon = Long.parseLong(Kosa.ok(Duration.ofMinutes(1), "daemon", "status").stdout()
                .replaceAll("(?s).* pid (\\d+) .*", "$1").strip());
        for (var e : SANDBOXES.entrySet()) {
            String mode = e.getKey();
            String id = e.getValue();
            long recorded = qemuPid(id);
            assertThat(Files.readString(Path.of("/proc", Long.toString(recorded), "comm")).strip())
                    .as("%s: the recorded process is the jail's first", mode).isEqualTo("bwrap");
            List<Long> jailed = children(recorded);
            assertThat(jailed).as("%s: QEMU runs under it", mode).hasSize(1);
            long qemu = jailed.getFirst();
            assertThat(Files.readString(Path.of("/proc", Long.toString(qemu), "cmdline"))).as(mode)
                    .startsWith(Path.of(dev.kosa8.vm.QemuBinary.find()).toString() + "\0")
                    .contains("kosa8-" + id);
            for (String ns : List.of("mnt", "pid", "net", "ipc", "uts")) {
                assertThat(ns(qemu, ns)).as("%s: QEMU's %s namespace is not the daemon's", mode, ns)
                        .isNotEqualTo(ns(daemon, ns));
            }
            String status = Files.readString(Path.of("/proc", Long.toString(qemu), "status"));
            assertThat(status).as("%s: no capability but what userfaultfd needs", mode)
                    .containsPattern("CapEff:\\s+0000000000(000000|080000)");
            assertThat(Files.readString(Path.of("/proc", Long.toString(qemu), "environ"))).as(mode)
                    .doesNotContain("KOSA8_HOME").doesNotContain("HOME=");
            // the file system the running QEMU sees, through its own root: its disk, and nothing of the user's
            Path root = Path.of("/proc", Long.toString(qemu), "root");
            HostPaths paths = paths();
            SandboxLayout layout = new SandboxLayout(paths);
            assertThat(seen(root, layout.rootDisk(id))).as("%s: QEMU sees its own disk", mode).isRegularFile();
            assertThat(seen(root, Path.of(System.getProperty("user.home")).resolve(".ssh")))
                    .as("%s: the user's home", mode).doesNotExist();
            assertThat(inJail(root, Path.of(System.getProperty("user.home"))))
                    .as("%s: of the user's home, at most the way to kosa8's own folders", mode)
                    .isSubsetOf(wayTo(Path.of(System.getProperty("user.home")), Kosa.HOME));
            for (String other : SANDBOXES.values()) {
                if (!other.equals(id)) {
                    assertThat(seen(root, layout.rootDisk(other))).as("%s: another sandbox's disk", mode)
                            .doesNotExist();
                }
            }
            assertThat(seen(root, layout.sandboxes().resolve(id).resolve("sandbox.json")))
                    .as("%s: its own record", mode).doesNotExist();
            assertThat(seen(root, paths.daemonSocket())).as("%s: the daemon's socket", mode).doesNotExist();
            assertThat(seen(root, Kosa.HOME.resolve("config"))).as("%s: kosa8's settings and secrets", mode)
                    .doesNotExist();
            assertThat(Kosa.ok(T, "exec", id, "--", "echo", "jailed").stdout()).isEqualTo("jailed\n");
        }
        // the broker answers through the network link the daemon joins to it (the jailed QEMU starts nothing and
        // sees no broker socket): a refusal for a host not allowed, an upstream error for a name no one can resolve
        Kosa.Result closed = Kosa.run(T, "exec", SANDBOXES.get("closed"), "--", "curl", "-s", "-o", "/dev/null",
                "-w", "%{http_code}", "http://not-allowed.example/");
        assertThat(closed.stdout()).as(closed.toString()).isEqualTo("403");
        Kosa.Result open = Kosa.run(T, "exec", SANDBOXES.get("open"), "--", "curl", "-s", "-o", "/dev/null",
                "-w", "%{http_code}", "http://nowhere.invalid/");
        assertThat(open.stdout()).as(open.toString()).matches("[45]\\d\\d");
    }

    /** Where {@code path} would be in the file system seen from {@code root} (a process's {@code /proc/PID/root}). */
    static Path seen(Path root, Path path) {
        return root.resolve(path.toAbsolutePath().toString().substring(1));
    }

    /** The names a jail shows in {@code dir} (seen from {@code root}); none when it shows no such folder. */
    static List<String> inJail(Path root, Path dir) throws Exception {
        Path d = seen(root, dir);
        if (!Files.isDirectory(d)) {
            return List.of();
        }
        try (var names = Files.list(d)) {
            return names.map(n -> n.getFileName().toString()).toList();
        }
    }

    /** The one name in {@code dir} on the way to {@code inside}, if {@code inside} is in it. */
    static List<String> wayTo(Path dir, Path inside) {
        Path d = dir.toAbsolutePath().normalize();
        Path in = inside.toAbsolutePath().normalize();
        return in.startsWith(d) && !in.equals(d) ? List.of(d.relativize(in).getName(0).toString()) : List.of();
    }

    /** The processes under a jail's first one: QEMU. */
    static List<Long> children(long pid) throws Exception {
        List<Long> out = new ArrayList<>();
        try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path t : tasks.toList()) {
                for (String c : Files.readString(t.resolve("children")).strip().split("\\s+")) {
                    if (!c.isEmpty()) {
                        out.add(Long.parseLong(c));
                    }
                }
            }
        }
        return out;
    }

    @Test
    void aProbeInASandboxsJailReachesNoneOfTheHostsFilesSocketsOrNetwork() throws Exception {
        HostPaths paths = paths();
        Settings settings = Settings.load(Kosa.HOME.resolve("config"));
        Jail jail = JailProbe.detect(settings.jail());
        assumeThat(jail.confines()).as(jail.describe()).isTrue();
        String id = SANDBOXES.get("closed");
        String other = SANDBOXES.get("open");
        SandboxLayout layout = new SandboxLayout(paths);
        SandboxRecord record = new SandboxStore(layout.sandboxes()).loadAll(m -> { }).stream()
                .filter(r -> r.id().equals(id)).findFirst().orElseThrow();
        // the spec the daemon starts this sandbox's next QEMU with (a standby's or a rewind's, in its alt folder)
        VmSpec spec = new MachineSpecs(layout, jail, settings.budget(),
                dev.kosa8.vm.CheckpointMode.probe(System.getenv()).mode()).of(record, DaemonMain.bootImage(paths),
                layout.runtime(id).resolve(SandboxLayout.ALT));
        Files.createDirectories(spec.qmpSocket().getParent());

        // what must stay out of reach: a user's SSH key, kosa8's secret store, the daemon's socket, the network
        Path home = Kosa.HOME.resolveSibling("it-user-home");
        Path key = Files.createDirectories(home.resolve(".ssh")).resolve("id_ed25519");
        Files.writeString(key, "-----BEGIN OPENSSH PRIVATE KEY----- fake\n");
        Kosa.Result set = Kosa.run(Duration.ofMinutes(1), "jail-probe-key".getBytes(StandardCharsets.UTF_8),
                "secret", "set", "JAIL_PROBE_KEY", "--host", "example.com");
        assertThat(set.exitCode()).as(set.toString()).isZero();
        Path secretValues = Kosa.HOME.resolve("config/secret-values.json");
        assertThat(secretValues).exists();
        Path otherDisk = layout.rootDisk(other);
        Path daemonSocket = paths.daemonSocket();
        assertThat(daemonSocket).exists();

        try (ServerSocket listener = new ServerSocket()) {
            listener.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 0));
            listener.setSoTimeout(200);
            AtomicInteger accepted = new AtomicInteger();
            Thread acceptor = Thread.ofVirtual().start(() -> {
                while (!listener.isClosed()) {
                    try {
                        listener.accept().close();
                        accepted.incrementAndGet();
                    } catch (SocketTimeoutException timeout) {
                        // again
                    } catch (java.io.IOException closed) {
                        return;
                    }
                }
            });
            String hostAddress = firstNonLoopbackAddress();
            String probe = """
                    try() { what=$1; shift; if "$@" >/dev/null 2>&1; then echo "REACHED $what"; else echo "refused $what"; fi; }
                    try ssh-key cat "$1"
                    try ssh-folder ls "$(dirname "$1")"
                    try other-disk head -c 16 "$2"
                    try secret-store cat "$3"
                    try secret-specs cat "$(dirname "$3")/secrets.json"
                    try own-record cat "$(dirname "$4")/sandbox.json"
                    try own-ca-key cat "$(dirname "$4")/ca/ca.key"
                    try daemon-socket socat -u OPEN:/dev/null UNIX-CONNECT:"$5"
                    try broker-folder ls "$(dirname "$9")/net"
                    try daemon-log cat "$(dirname "$(dirname "$4")")/../kosa8d.log"
                    try tcp-loopback bash -c "exec 3<>/dev/tcp/127.0.0.1/$6"
                    try tcp-host bash -c "exec 3<>/dev/tcp/$7/$6"
                    try host-processes test "$(ls -d /proc/[0-9]* | wc -l)" -gt 10
                    echo "can own-disk $(head -c 3 "$4" | od -An -c | tr -d ' \\n')"
                    echo "can kernel $(head -c 4 "$8" | wc -c)"
                    echo "can socat $(socat -V >/dev/null 2>&1 && echo yes)"
                    echo ok > "$9/probe-wrote" && echo "can runtime-folder"
                    """;
            List<String> argv = List.of("/bin/bash", "-c", probe, "probe", key.toString(), otherDisk.toString(),
                    secretValues.toString(), spec.rootDisk().toString(), daemonSocket.toString(),
                    Integer.toString(listener.getLocalPort()), hostAddress, spec.kernel().toString(),
                    spec.qmpSocket().getParent().toString());
            Path out = Files.createTempFile("jail-probe", ".log");
            try {
                QemuProcess p = QemuProcess.start(Vm.jailed(spec, argv), out, spec.jail().confines());
                assertThat(p.waitFor(Duration.ofMinutes(1))).as("the probe ends").isTrue();
                String said = Files.readString(out);
                assertThat(said).as("what the probe could do").contains("can own-disk QFI", "can kernel 4", "can socat yes",
                        "can runtime-folder");
                assertThat(said).as("what the probe reached")
                        .contains("refused ssh-key", "refused ssh-folder", "refused other-disk", "refused secret-store",
                                "refused secret-specs", "refused own-record", "refused own-ca-key",
                                "refused daemon-socket", "refused broker-folder", "refused daemon-log", "refused tcp-loopback",
                                "refused tcp-host", "refused host-processes")
                        .doesNotContain("REACHED");
                assertThat(spec.qmpSocket().resolveSibling("probe-wrote")).hasContent("ok");
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(spec.qmpSocket().resolveSibling("probe-wrote"));
                Kosa.run(Duration.ofMinutes(1), "secret", "rm", "JAIL_PROBE_KEY");
                Kosa.deleteTree(home);
            }
            listener.close();
            acceptor.join();
            assertThat(accepted.get()).as("connections that reached the host's listener").isZero();
        }
    }

    private static String firstNonLoopbackAddress() throws Exception {
        for (NetworkInterface i : NetworkInterface.networkInterfaces().toList()) {
            for (InetAddress a : i.inetAddresses().toList()) {
                if (!a.isLoopbackAddress() && a instanceof java.net.Inet4Address) {
                    return a.getHostAddress();
                }
            }
        }
        return "127.0.0.2";
    }
}
