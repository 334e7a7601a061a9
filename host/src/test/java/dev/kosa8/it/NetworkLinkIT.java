package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.egress.TestUpstream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The network link under load and across the machine's changes, in real
 * guests: a guest's connections cost the host no process and the daemon no
 * thread, the ones past the cap are reset at once, another sandbox's network
 * works meanwhile; DNS past its rate is refused; a connection open at a
 * checkpoint is reset after the rewind, and one open across a daemon restart
 * too, while new ones work at once.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NetworkLinkIT {
    static final Duration T = Duration.ofMinutes(3);
    static final ObjectMapper JSON = new ObjectMapper();
    static TestUpstream api;
    static Path folder;
    static String id;
    static String other;

    @BeforeAll
    static void boot() throws Exception {
        folder = Kosa.HOME.resolveSibling("it-workspaces").resolve("NetworkLinkIT");
        if (Files.exists(folder)) {
            Kosa.deleteTree(folder);
        }
        Files.createDirectories(folder);
        folder = folder.toRealPath();
        api = new TestUpstream(Files.createDirectories(Kosa.HOME.resolveSibling("it-upstreams").resolve("link")),
                "api.test");
        Files.writeString(Kosa.EGRESS_TEST_CONFIG, """
                {"loopback": {"api.test:80": %d, "api.test:443": %d}}
                """.formatted(api.httpPort(), api.httpsPort()));
        id = Kosa.ok(Duration.ofMinutes(15), "create", "--memory", "256M", "--workspace", folder.toString(),
                "--allow", "api.test").stdout().strip();
        other = Kosa.ok(Duration.ofMinutes(15), "create", "--workspace", "none",
                "--allow", "api.test").stdout().strip();
    }

    @AfterAll
    static void remove() throws Exception {
        for (String s : new String[] {id, other}) {
            if (s != null) {
                Kosa.run(Duration.ofMinutes(1), "rm", "-f", s);
            }
        }
        Files.deleteIfExists(Kosa.EGRESS_TEST_CONFIG);
        if (api != null) {
            api.close();
        }
    }

    static Kosa.Result sh(String sandbox, String script) {
        return Kosa.run(T, "exec", sandbox, "--", "sh", "-c", script);
    }

    static final String CURL = "curl -sS --max-time 60 --noproxy '*' http://api.test/hello";
    /**
     * Connects to the broker's HTTP port, sends a request and reads: prints the answer's first byte, or the name of
     * the error that ended it (at connect or after), or {@code closed} or {@code timeout}.
     */
    static final String RESET_PROBE = """
            python3 -c '
            import socket
            try:
                s = socket.create_connection(("10.0.2.100", 80), timeout=20)
                s.sendall(b"GET /hello HTTP/1.1\\r\\nHost: api.test\\r\\n\\r\\n")
                b = s.recv(1)
                print(repr(b) if b else "closed")
            except socket.timeout:
                print("timeout")
            except OSError as e:
                print(type(e).__name__)
            '""";

    static long qemuPid(String sandbox) throws Exception {
        return JSON.readTree(Kosa.ok(T, "inspect", sandbox).stdout()).path("qemuPid").asLong();
    }

    static long daemonPid() {
        String status = Kosa.ok(T, "daemon", "status").stdout();
        return Long.parseLong(status.replaceAll("(?s).* pid (\\d+) .*", "$1").strip());
    }

    static int threads(long pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(pid), "status"))) {
            if (line.startsWith("Threads:")) {
                return Integer.parseInt(line.substring("Threads:".length()).strip());
            }
        }
        throw new AssertionError("no thread count for pid " + pid);
    }

    /** Resident memory of a process, in bytes. */
    static long rss(long pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D", "")) * 1024;
            }
        }
        throw new AssertionError("no resident size for pid " + pid);
    }

    /**
     * What QEMU and the daemon may gain in resident memory while a guest holds every connection it may: nothing
     * is kept per connection but the daemon's buffers and the broker's state for it. On the path before issue 34 a
     * guest holding 300 connections cost the host 256 relay processes and 1.1 GiB.
     */
    static final long MEMORY_BOUND = 128L << 20;
    /** Threads QEMU or the daemon may gain meanwhile for reasons of their own; far below one per held connection. */
    static final int THREAD_SLACK = 32;

    static long descendants(long pid) {
        return ProcessHandle.of(pid).orElseThrow().descendants().count();
    }

    static void await(Path file, Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        while (!(Files.exists(file) && Files.size(file) > 0)) {
            assertThat(System.nanoTime()).as("waiting for %s", file).isLessThan(deadline);
            Thread.sleep(200);
        }
    }

    @Test
    @Order(1)
    void aThousandConnectionsCostTheHostNoProcessOrThreadAndThoseBeyondTheCapAreResetAtOnce() throws Exception {
        assertThat(sh(id, CURL).stdout()).isEqualTo("hello from api.test GET");
        long recorded = qemuPid(id);
        // the record names the jail's first process where QEMU runs in one (docs/design.md), QEMU itself otherwise
        long qemu = LifecycleIT.qemuOf(LifecycleIT.machine(recorded)).pid();
        long jailProcessesBefore = descendants(recorded);
        // the QEMU that carries this network runs under the strict filter: it could not start a process if it tried
        assertThat(Files.readString(Path.of("/proc", String.valueOf(qemu), "cmdline")).replace('\0', ' '))
                .contains("-sandbox on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny")
                .doesNotContain("-netdev", "guestfwd");
        assertThat(Files.readAllLines(Path.of("/proc", String.valueOf(qemu), "status")))
                .as("a seccomp filter is in force").contains("Seccomp:\t2");
        long daemon = daemonPid();
        long qemuChildrenBefore = descendants(qemu);
        long daemonChildrenBefore = descendants(daemon);
        int qemuThreadsBefore = threads(qemu);
        int daemonThreadsBefore = threads(daemon);
        long memoryBefore = rss(qemu) + rss(daemon);
        Files.writeString(folder.resolve("hold.py"), """
                import os, resource, socket, time
                resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
                socks, refused = [], 0
                t0 = time.time()
                for i in range(1000):
                    s = socket.socket(); s.settimeout(30)
                    try:
                        s.connect(("10.0.2.100", 80)); socks.append(s)
                    except ConnectionError:
                        refused += 1; s.close()
                time.sleep(3)
                alive, reset, ended = [], 0, 0
                for s in socks:
                    s.setblocking(False)
                    try:
                        ended += s.recv(1) == b""
                    except BlockingIOError:
                        alive.append(s)
                    except ConnectionResetError:
                        reset += 1
                with open("/workspace/held.tmp", "w") as f:
                    f.write("%d %d %d %.1f\\n" % (len(alive), reset + refused, ended, time.time() - t0))
                os.rename("/workspace/held.tmp", "/workspace/held")
                while not os.path.exists("/workspace/release"):
                    time.sleep(0.2)
                for s in alive:
                    s.close()
                open("/workspace/released", "w").write("done\\n")
                """);
        sh(id, "cd /workspace && nohup python3 hold.py > hold.out 2>&1 &");
        await(folder.resolve("held"), Duration.ofMinutes(5));
        String[] held = Files.readString(folder.resolve("held")).strip().split(" ");
        try {
            assertThat(Integer.parseInt(held[0])).as("connections held open (took %s s)", held[3]).isEqualTo(256);
            assertThat(Integer.parseInt(held[1])).as("connections reset, at connect or at once after")
                    .isEqualTo(744);
            assertThat(Integer.parseInt(held[2])).as("connections merely closed").isZero();

            // while the guest holds them: no process on the host, no thread in QEMU or the daemon per connection
            assertThat(descendants(qemu)).as("QEMU's child processes").isEqualTo(qemuChildrenBefore).isZero();
            assertThat(descendants(recorded)).as("the processes in QEMU's jail").isEqualTo(jailProcessesBefore);
            assertThat(descendants(daemon)).as("the daemon's child processes (QEMUs among them)")
                    .isEqualTo(daemonChildrenBefore);
            assertThat(rss(qemu) + rss(daemon) - memoryBefore).as("resident memory QEMU and the daemon gained")
                    .isLessThan(MEMORY_BOUND);
            // threads come and go in both for other reasons (QEMU's pool of I/O workers went from 9 to 14 while the
            // guest wrote its files, in the first run under TCG); a thread per held connection would be 256 more
            assertThat(threads(qemu)).as("QEMU's threads").isLessThan(qemuThreadsBefore + THREAD_SLACK);
            assertThat(threads(daemon)).as("the daemon's threads").isLessThan(daemonThreadsBefore + THREAD_SLACK);

            // one more is reset at once, not left waiting. The probe names the error itself: curl folds a reset
            // that lands before it has checked its connect (it did in CI) into "Couldn't connect to server", the
            // same words as a port with nothing listening
            long t0 = System.nanoTime();
            Kosa.Result refused = sh(id, RESET_PROBE);
            assertThat(refused.stdout().strip()).as(refused.toString()).isEqualTo("ConnectionResetError");
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(30));
            // and another sandbox's network works meanwhile
            assertThat(sh(other, CURL).stdout()).isEqualTo("hello from api.test GET");
        } finally {
            // the next tests start only once the guest has let go, whatever failed here
            Files.writeString(folder.resolve("release"), "now\n");
            await(folder.resolve("released"), Duration.ofMinutes(2));
        }
        // the guest's connections closed, its network works again
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        Kosa.Result again;
        while ((again = sh(id, CURL)).exitCode() != 0 && System.nanoTime() < deadline) {
            Thread.sleep(500);
        }
        assertThat(again.stdout()).as(again.toString()).isEqualTo("hello from api.test GET");
        assertThat(Kosa.ok(T, "net", "log", id).stdout()).contains("more than 256 open connections");
    }

    @Test
    @Order(2)
    void aFloodOfDnsQueriesIsRefusedPastTheRateAndTheDaemonServesOn() throws Exception {
        // The rate is kept by the daemon on the host's clock, so the flood is timed on the host's clock too: the
        // guest's runs slower than the host's under TCG on a loaded host (once 0.43 s in the guest for 0.68 s of the
        // host's bucket), and a bound from it would blame the daemon for the guest's clock. The host says go
        // through the folder and sees the result appear there, so its interval holds the whole flood.
        Path go = folder.resolve("dns-go");
        Path done = folder.resolve("dns-done");
        Files.deleteIfExists(go);
        Files.deleteIfExists(done);
        Files.writeString(folder.resolve("flood.py"), """
                import os, socket, struct, time
                def recvn(s, n):
                    b = b""
                    while len(b) < n:
                        c = s.recv(n - len(b))
                        if not c: raise EOFError("closed after %d bytes" % len(b))
                        b += c
                    return b
                s = socket.create_connection(("10.0.2.100", 53), timeout=60)
                open("/workspace/dns-ready", "w").write("yes\\n")
                while not os.path.exists("/workspace/dns-go"):
                    time.sleep(0.01)
                t0 = time.time()
                n = 1000
                for i in range(n):
                    q = struct.pack(">HHHHHH", i, 0x0100, 1, 0, 0, 0) + b"\\x03api\\x04test\\x00\\x00\\x01\\x00\\x01"
                    s.sendall(struct.pack(">H", len(q)) + q)
                codes = {}
                for i in range(n):
                    a = recvn(s, struct.unpack(">H", recvn(s, 2))[0])
                    codes[a[3] & 15] = codes.get(a[3] & 15, 0) + 1
                r = "%d %d %d %.2f\\n" % (codes.get(0, 0), codes.get(5, 0), sum(codes.values()), time.time() - t0)
                open("/workspace/dns-done.part", "w").write(r)
                os.rename("/workspace/dns-done.part", "/workspace/dns-done")
                """);
        Files.deleteIfExists(folder.resolve("dns-ready"));
        sh(id, "nohup python3 /workspace/flood.py > /tmp/flood.out 2>&1 &");
        await(folder.resolve("dns-ready"), Duration.ofMinutes(1));
        long t0 = System.nanoTime();
        Files.writeString(go, "go\n");
        while (!Files.exists(done)) {
            if (System.nanoTime() - t0 > Duration.ofMinutes(1).toNanos()) {
                throw new AssertionError("no result of the flood within a minute: "
                        + sh(id, "cat /tmp/flood.out").stdout());
            }
            Thread.sleep(5);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        String[] f = Files.readString(done).strip().split(" ");
        assertThat(f).as(String.join(" ", f)).hasSize(4);
        int answered = Integer.parseInt(f[0]);
        assertThat(Integer.parseInt(f[2])).as("every query answered").isEqualTo(1000);
        assertThat(Integer.parseInt(f[1])).as("REFUSED past the rate").isPositive();
        assertThat(answered).as("answered: the burst and %.2f s at the rate, on the host's clock (the guest's said "
                + "%s s)", seconds, f[3]).isBetween(200, 200 + (int) Math.ceil(seconds * 100) + 1);
        assertThat(Kosa.ok(T, "net", "log", id).stdout()).contains("DNS queries a second: REFUSED");
        Thread.sleep(3000); // the bucket refills
        assertThat(sh(id, "getent hosts api.test").stdout()).startsWith("10.0.2.100");
    }

    @Test
    @Order(3)
    void aConnectionOpenAtACheckpointIsResetAfterTheRewindAndNewOnesWork() throws Exception {
        Files.writeString(folder.resolve("open.py"), """
                import os, socket, time
                s = socket.create_connection(("10.0.2.100", 80), timeout=30)
                open("/root/connected", "w").write("yes\\n")
                with open("/root/go") as fifo:
                    fifo.read()
                s.settimeout(20)
                try:
                    r = "data" if s.recv(1) else "end of file"
                except ConnectionResetError:
                    r = "reset"
                except socket.timeout:
                    r = "still open"
                open("/workspace/after-rewind", "w").write(r + "\\n")
                """);
        sh(id, "rm -f /root/go /root/connected; mkfifo /root/go; "
                + "nohup python3 /workspace/open.py > /tmp/open.out 2>&1 &");
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (sh(id, "test -e /root/connected").exitCode() != 0) {
            assertThat(System.nanoTime()).as("the connection is open").isLessThan(deadline);
            Thread.sleep(200);
        }
        String cp = Kosa.ok(T, "checkpoint", id, "-m", "a connection open").stdout().strip();
        Kosa.ok(T, "rewind", id, cp);
        sh(id, "echo go > /root/go");
        await(folder.resolve("after-rewind"), Duration.ofMinutes(1));
        assertThat(Files.readString(folder.resolve("after-rewind")).strip())
                .as("the connection's host side went with the machine it was made in").isEqualTo("reset");
        assertThat(sh(id, CURL).stdout()).as("a new connection after the rewind").isEqualTo("hello from api.test GET");
    }

    @Test
    @Order(4)
    void afterADaemonRestartConnectionsOpenAcrossItAreResetAndNewOnesWork() throws Exception {
        Files.writeString(folder.resolve("across.py"), """
                import socket
                s = socket.create_connection(("10.0.2.100", 80), timeout=30)
                open("/workspace/across-open", "w").write("yes\\n")
                s.settimeout(120)
                try:
                    r = "data" if s.recv(1) else "end of file"
                except ConnectionResetError:
                    r = "reset"
                except socket.timeout:
                    r = "still open"
                # on the root disk: the workspace's mount is the old daemon's until the new one mounts it afresh,
                # and a write waiting on it then fails (EIO), as the reset comes the moment the old daemon goes
                open("/root/across-after", "w").write(r + "\\n")
                """);
        sh(id, "nohup python3 /workspace/across.py > /tmp/across.out 2>&1 &");
        await(folder.resolve("across-open"), Duration.ofMinutes(1));
        long before = daemonPid();
        Kosa.ok(T, "daemon", "stop");
        // the next command starts a new daemon, which re-attaches to the machines and their network ports
        assertThat(sh(id, CURL).stdout()).as("a new connection through the new daemon")
                .isEqualTo("hello from api.test GET");
        assertThat(daemonPid()).isNotEqualTo(before);
        assertThat(sh(other, CURL).stdout()).isEqualTo("hello from api.test GET");
        long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        Kosa.Result after;
        while ((after = sh(id, "cat /root/across-after")).exitCode() != 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no /root/across-after within 3 min; the script said: "
                        + sh(id, "cat /tmp/across.out"));
            }
            Thread.sleep(500);
        }
        assertThat(after.stdout().strip()).as("a connection whose host side was the daemon before").isEqualTo("reset");
    }

    /**
     * A download's larger pieces come through the network window, a read-only disk of the daemon's file (also
     * through a daemon that re-attached after a restart, as this one has), and arrive whole and in order; the
     * guest, root and all, cannot write that disk, and the host's file stays as the daemon wrote it.
     */
    @Test
    @Order(5)
    void aDownloadComesWholeThroughTheNetworkWindowWhichTheGuestCannotWrite() throws Exception {
        int n = 8 << 20;
        java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
        for (long i = 0; i < n; i++) {
            sha.update(dev.kosa8.egress.TestUpstream.patternByte(i));
        }
        String expected = java.util.HexFormat.of().formatHex(sha.digest());
        Kosa.Result r = sh(other, "curl -sS --max-time 120 --noproxy '*' http://api.test/pattern?n=" + n
                + " | sha256sum");
        assertThat(r.stdout()).as(r.toString()).startsWith(expected);
        Path window = Kosa.HOME.resolve("run").resolve(other).resolve("net.window");
        byte[] before = Files.readAllBytes(window);
        int written = 0;
        for (byte b : before) {
            written += b == 0 ? 0 : 1;
        }
        assertThat(written).as("the daemon wrote the download's pieces into the window").isGreaterThan(1 << 20);
        Kosa.Result w = sh(other, ReadOnlyDisk.writeAttempts(dev.kosa8.protocol.NetLink.WINDOW_SERIAL));
        assertThat(w.stdout()).as(w.toString()).contains(ReadOnlyDisk.ALL_REFUSED);
        assertThat(Files.readAllBytes(window)).as("the host's window file").isEqualTo(before);
        assertThat(sh(other, CURL).stdout()).as("and the network works on").isEqualTo("hello from api.test GET");
    }

    @Test
    @Order(6)
    void theTemplateMovedItsRehearsalDownloadsWholeThroughItsLinkBeforeItWasSaved() throws Exception {
        var said = JSON.readTree(Kosa.templateOf(other).resolve("template.json").toFile());
        // each counted download is one the guest's curl ended with success: every byte its Content-Length named
        assertThat(said.path("netRehearsals").asInt(-1)).as(said.toString())
                .isEqualTo(6); // dev.kosa8.daemon.TemplateRehearsals.NET_REHEARSALS: all of them
        Path sockets = Kosa.HOME.resolve("run").resolve("templates");
        if (Files.isDirectory(sockets)) {
            try (var names = Files.list(sockets)) {
                assertThat(names.map(p -> p.getFileName().toString())).as("no rehearsal's listener is left")
                        .noneMatch(n -> n.endsWith(".rehearsal"));
            }
        }
        assertThat(sh(other, CURL).stdout()).as("the sandbox's own link works").isEqualTo("hello from api.test GET");
    }
}
