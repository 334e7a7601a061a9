package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The workspace as guest programs use it: one host folder, live both ways,
 * served by kosa8's own 9p server. One sandbox for the class, sharing a
 * folder made for it ({@link SharedSandbox}); every test works in its own
 * sub-folder and checks the effect on the host side too.
 */
// Symlinks out of the folder reach it here, as they did before they were held for review (HeldPathsIT
// covers holding them): these tests are about the server's own handling of whatever the folder holds.
@ExtendWith(SharedSandbox.class)
@SharedSandbox.CreateArgs({"--no-hold", "symlinks"})
class WorkspaceIT {

    private static Kosa.Result sh(SharedSandbox.Booted box, String dir, String script) {
        return sh(box, dir, script, Duration.ofMinutes(3));
    }

    private static Kosa.Result sh(SharedSandbox.Booted box, String dir, String script, Duration timeout) {
        Kosa.Result r = box.exec(timeout, "sh", "-euc", "mkdir -p " + dir + " && cd " + dir + " && " + script);
        assertThat(r.exitCode()).as(r.toString()).isZero();
        return r;
    }

    @Test
    void commandsStartInTheFolderAtTheSamePathAsOnTheHost(SharedSandbox.Booted box) throws Exception {
        Files.writeString(box.workspace().resolve("from-host.txt"), "made on the host\n");
        Kosa.Result r = box.exec("sh", "-c", "pwd; cat from-host.txt; cat /workspace/from-host.txt");
        assertThat(r.stdout()).as(r.toString()).isEqualTo(box.workspace() + "\nmade on the host\nmade on the host\n");
    }

    @Test
    void gitWorksInTheWorkspace(SharedSandbox.Booted box) {
        Kosa.Result r = sh(box, "git", String.join(" && ",
                "git init -q -b main .",
                "git config user.email a@example.com && git config user.name agent",
                "echo one > a.txt && git add a.txt && git commit -qm first",
                "git checkout -q -b topic && echo two >> a.txt && git commit -qam second",
                "git checkout -q main && cat a.txt",
                "git status --porcelain && git log --oneline --all | wc -l"));
        assertThat(r.stdout()).isEqualTo("one\n2\n");
        Path repo = box.workspace().resolve("git");
        assertThat(repo.resolve(".git/HEAD")).content().isEqualTo("ref: refs/heads/main\n");
        assertThat(repo.resolve("a.txt")).content().isEqualTo("one\n");
    }

    @Test
    void pythonWritesAndReadsAndRenamesOverAnExistingFile(SharedSandbox.Booted box) throws Exception {
        Kosa.Result r = sh(box, "py", "python3 -c '"
                + "import os\n"
                + "open(\"a\", \"w\").write(\"new\" * 1000)\n"
                + "open(\"b\", \"w\").write(\"old\")\n"
                + "os.rename(\"a\", \"b\")\n"
                + "print(len(open(\"b\").read()), os.path.exists(\"a\"))\n'");
        assertThat(r.stdout()).isEqualTo("3000 False\n");
        assertThat(box.workspace().resolve("py/b")).content().isEqualTo("new".repeat(1000));
    }

    @Test
    void anUnlinkedOpenFileStaysReadableAndWritable(SharedSandbox.Booted box) {
        Kosa.Result r = sh(box, "unlinked", "python3 -c '"
                + "import os\n"
                + "f = open(\"gone\", \"w+\")\n"
                + "f.write(\"still here\"); f.flush()\n"
                + "os.unlink(\"gone\")\n"
                + "f.write(\" and more\"); f.flush(); f.seek(0)\n"
                + "print(f.read(), os.path.exists(\"gone\"))\n'");
        assertThat(r.stdout()).isEqualTo("still here and more False\n");
        assertThat(box.workspace().resolve("unlinked/gone")).doesNotExist();
    }

    @Test
    void modesAndTimesSetInTheGuestReachTheHost(SharedSandbox.Booted box) throws Exception {
        sh(box, "meta", "echo x > f && chmod 0750 f && touch -d '2001-02-03 04:05:06 UTC' f"
                + " && mkdir -m 0711 d && umask 077 && echo y > private");
        Path dir = box.workspace().resolve("meta");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("f"))))
                .isEqualTo("rwxr-x---");
        assertThat(Files.getLastModifiedTime(dir.resolve("f")))
                .isEqualTo(FileTime.from(Instant.parse("2001-02-03T04:05:06Z")));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("d"))))
                .isEqualTo("rwx--x--x");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("private"))))
                .as("the guest's umask, not the daemon's").isEqualTo("rw-------");
        int hostUid = (Integer) Files.getAttribute(dir.resolve("f"), "unix:uid");
        assertThat(hostUid).as("files the guest makes belong to the host user")
                .isEqualTo((Integer) Files.getAttribute(box.workspace(), "unix:uid"));
        Kosa.Result owner = box.exec("stat", "-c", "%u %a", "meta/f");
        assertThat(owner.stdout()).as("the host user's files are the guest root's").isEqualTo("0 750\n");
    }

    @Test
    void symlinksAndHardLinksInsideWork(SharedSandbox.Booted box) throws Exception {
        Kosa.Result r = sh(box, "links", "mkdir -p sub && echo target > sub/t && ln -s sub/t rel && ln -s "
                + "$PWD/sub/t abs && ln sub/t hard && cat rel abs hard && readlink rel && stat -c %h sub/t");
        assertThat(r.stdout()).isEqualTo("target\ntarget\ntarget\nsub/t\n2\n");
        Path dir = box.workspace().resolve("links");
        assertThat(Files.readSymbolicLink(dir.resolve("rel"))).isEqualTo(Path.of("sub/t"));
        assertThat(Files.getAttribute(dir.resolve("hard"), "unix:ino"))
                .isEqualTo(Files.getAttribute(dir.resolve("sub/t"), "unix:ino"));
        assertThat(Files.isSymbolicLink(dir.resolve("abs"))).isTrue();
    }

    @Test
    @Tag("long") // 2-6 minutes under TCG: ./run-tests long
    void twentyThousandSmallFilesAreCreatedListedAndDeleted(SharedSandbox.Booted box) throws Exception {
        // eight writers at once, as a build would: 9p carries their requests side by side
        Kosa.Result made = sh(box, "many", "seq 0 7 | xargs -P8 -I{} python3 -c '"
                + "import sys\n"
                + "w = int(sys.argv[1])\n"
                + "for i in range(w, 20000, 8):\n"
                + "    with open(\"f%05d\" % i, \"w\") as f: f.write(str(i))\n' {}"
                + " && ls | wc -l && ls -f | sort | sed -n 3p", Duration.ofMinutes(12));
        assertThat(made.stdout()).isEqualTo("20000\nf00000\n");
        try (var files = Files.list(box.workspace().resolve("many"))) {
            assertThat(files.count()).isEqualTo(20000);
        }
        assertThat(box.workspace().resolve("many/f12345")).content().isEqualTo("12345");
        Kosa.Result gone = sh(box, "many", "ls | xargs -P8 -n 500 rm && ls | wc -l", Duration.ofMinutes(12));
        assertThat(gone.stdout()).isEqualTo("0\n");
        try (var files = Files.list(box.workspace().resolve("many"))) {
            assertThat(files.count()).isZero();
        }
    }

    @Test
    @Tag("long") // 2-4 minutes under TCG: ./run-tests long; largeReadsComeThroughTheReadWindowIntact and
    // zeroCopyReadsAndWritesOfEveryShapeLandIntact carry the same paths in the default suite
    void aGibFileKeepsItsChecksumBothWays(SharedSandbox.Booted box) throws Exception {
        Path dir = box.workspace().resolve("big");
        // whole-MiB writes and reads: each is one 9p message (small ones would each be a round trip)
        Kosa.Result written = sh(box, "big", "dd if=/dev/urandom bs=1M count=1024 status=none"
                + " | dd of=from-guest bs=1M iflag=fullblock status=none"
                + " && dd if=from-guest bs=1M status=none | sha256sum | cut -d' ' -f1", Duration.ofMinutes(10));
        assertThat(Files.size(dir.resolve("from-guest"))).isEqualTo(1L << 30);
        assertThat(written.stdout().strip()).isEqualTo(Kosa.sha256(dir.resolve("from-guest")));
        Files.delete(dir.resolve("from-guest"));

        Path fromHost = dir.resolve("from-host");
        byte[] block = new byte[1 << 20];
        java.util.Random random = new java.util.Random(42);
        try (var out = Files.newOutputStream(fromHost)) {
            for (int i = 0; i < 1024; i++) {
                random.nextBytes(block);
                out.write(block);
            }
        }
        Kosa.Result read = sh(box, "big", "dd if=from-host bs=1M status=none | sha256sum | cut -d' ' -f1",
                Duration.ofMinutes(10));
        assertThat(read.stdout().strip()).isEqualTo(Kosa.sha256(fromHost));
        Files.delete(fromHost);
    }

    /**
     * The guest kernel speaks 9p straight to the workspace's port through kosa8's module (trans=kosa8),
     * and with the folder cached (the default) a stat of a file it has seen, a read-only open and a close
     * cross to the host not at all: the module answers the opens and the Tclunks itself (its counters
     * show each). Their messages to the server are held in the guest, and a fid closed while the walk
     * that made it is still held is forgotten there (quiet_unsent): most of 4,500 opens and closes of one
     * file are never sent, and those that are stay within the server's 4,096 open files of a sandbox.
     */
    /**
     * The tests of kosa8's kernel module (its counters, its windows) run where the guest has it: not on another
     * architecture's guest (./run-tests arm64), whose folder goes through the relay until the module is built for
     * it (docs/arm64.md, "Not yet"); the other tests of the folder run there as here.
     */
    static void assumeKernelTransport() {
        org.junit.jupiter.api.Assumptions.assumeFalse(Kosa.foreignGuests(),
                "kosa8's kernel transport is not built for another architecture's guests yet");
    }

    @Test
    void theKernelsOwnTransportCarriesTheFolderAndAnswersOpensAndClunksInTheGuest(SharedSandbox.Booted box)
            throws Exception {
        assumeKernelTransport();
        Kosa.Result r = sh(box, "kernel", String.join("\n",
                "awk '$2 == \"/workspace\" { print $3, $4 }' /proc/mounts | grep -o '^9p .*trans=kosa8' | cut -d' ' -f1",
                "python3 - <<'EOF'",
                "import os",
                "def param(name): return int(open('/sys/module/kosa8_ws9p/parameters/' + name).read())",
                "open('s', 'w').close()",
                "for i in range(20): os.stat('s')",
                "open('/sys/module/kosa8_ws9p/parameters/sync', 'w').write('1')  # every notice of the host's in",
                "before = param('rx_bytes')",
                "for i in range(100): os.stat('s')",
                "print('stats', param('rx_bytes') - before)",
                "before, opens, clunks = param('rx_bytes'), param('quiet_opens'), param('quiet_clunks')",
                "unsent = param('quiet_unsent')",
                "for i in range(4500): os.close(os.open('s', os.O_RDONLY))",
                "print('opens', param('quiet_opens') - opens, 'clunks', param('quiet_clunks') - clunks)",
                "unsent = param('quiet_unsent') - unsent",
                "print('most never sent' if unsent > 4500 // 2 else 'never sent: %d' % unsent)",
                "print('less than a byte an open' if param('rx_bytes') - before < 4500 else param('rx_bytes') - before)",
                "EOF"));
        assertThat(r.stdout()).as(r.toString())
                .isEqualTo("9p\nstats 0\nopens 4500 clunks 4500\nmost never sent\nless than a byte an open\n");
    }

    /**
     * A large read's data comes by the read window's disk, which the module reads itself (one block
     * read per reply, straight into the reply's buffer), not in 4 KiB port pieces: 8 MiB read in the
     * guest bring the module well under 100 KiB from the port, and arrive intact.
     */
    @Test
    void largeReadsComeThroughTheReadWindowIntact(SharedSandbox.Booted box) throws Exception {
        assumeKernelTransport();
        Path dir = Files.createDirectories(box.workspace().resolve("window"));
        byte[] data = new byte[8 << 20];
        new java.util.Random(8).nextBytes(data);
        Files.write(dir.resolve("big"), data);
        Kosa.Result r = sh(box, "window", String.join("\n",
                "rx() { cat /sys/module/kosa8_ws9p/parameters/rx_bytes; }",
                "r0=$(rx)",
                "s=$(sha256sum < big | cut -d' ' -f1)",
                "echo $(( $(rx) - r0 )) $s"));
        String[] f = r.stdout().strip().split(" ");
        assertThat(f[1]).as(r.toString()).isEqualTo(Kosa.sha256(dir.resolve("big")));
        assertThat(Long.parseLong(f[0])).as("bytes from the port for an 8 MiB read").isLessThan(100_000);
    }

    /**
     * Reads and writes of more than 1 KiB are zero-copy: their data go between the program's own pages
     * and the host, by the read window or the port. Each shape the client can hand the module: a buffer
     * at an odd address, several segments at once (readv/writev: the module takes one a request and the
     * client carries on from the count the reply gives), a mapped file's own pages (read in and written
     * back from the page cache), a length that ends mid-sector. Every byte must land where it belongs.
     */
    @Test
    void zeroCopyReadsAndWritesOfEveryShapeLandIntact(SharedSandbox.Booted box) throws Exception {
        assumeKernelTransport();
        Path dir = Files.createDirectories(box.workspace().resolve("zc"));
        byte[] host = new byte[(3 << 20) + 777];
        new java.util.Random(3).nextBytes(host);
        Files.write(dir.resolve("from-host"), host);
        String script = String.join("\n",
                "import os, mmap, hashlib",
                "def zc(): return int(open('/sys/module/kosa8_ws9p/parameters/zc_requests').read())",
                "z0 = zc()",
                "fd = os.open('from-host', os.O_RDONLY)",
                "n = os.fstat(fd).st_size",
                "src = os.pread(fd, n, 0)",
                "assert len(src) == n, 'a plain read'",
                "v = memoryview(bytearray(n + 5))[5:]",
                "k = 0",
                "while k < n: k += os.preadv(fd, [v[k:]], k)",
                "assert v == src, 'a read into an odd address'",
                "parts = [bytearray(300001), bytearray(5000), bytearray(n - 305001)]",
                "assert os.preadv(fd, parts, 0) == n and b''.join(parts) == src, 'a read into three segments'",
                "m = mmap.mmap(fd, n, prot=mmap.PROT_READ)",
                "assert m[:] == src, 'a mapped read'",
                "m.close()",
                "os.close(fd)",
                "data = os.urandom(n)",
                "out = os.open('from-guest', os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)",
                "w = memoryview(bytearray(3) + data)[3:]",
                "k = 0",
                "while k < n: k += os.pwrite(out, w[k:], k)",
                "assert os.pwritev(out, [data[:70001], data[70001:72001], data[72001:]], n) == n",
                "os.close(out)",
                "mf = os.open('mapped', os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)",
                "os.ftruncate(mf, n)",
                "m = mmap.mmap(mf, n)",
                "m[:] = data[::-1]",
                "m.flush()",
                "m.close()",
                "os.close(mf)",
                "print(zc() - z0)",
                "print(hashlib.sha256(src).hexdigest())",
                "print(hashlib.sha256(data + data).hexdigest())",
                "print(hashlib.sha256(data[::-1]).hexdigest())");
        Files.writeString(dir.resolve("zc.py"), script);
        String[] out = sh(box, "zc", "python3 zc.py").stdout().strip().split("\n");
        assertThat(out).hasSize(4);
        assertThat(out[1]).as("what the guest read").isEqualTo(Kosa.sha256(dir.resolve("from-host")));
        assertThat(Kosa.sha256(dir.resolve("from-guest"))).as("what the guest wrote").isEqualTo(out[2]);
        assertThat(Kosa.sha256(dir.resolve("mapped"))).as("what the guest wrote by a mapping").isEqualTo(out[3]);
        assertThat(Long.parseLong(out[0])).as("zero-copy requests").isGreaterThanOrEqualTo(16);
    }

    /**
     * A read the module cannot take pages for (a buffer the program may not write) fails with EFAULT and
     * costs the mount nothing. Each such failure once kept its request for good, and with it one of the
     * mount's 65,535 tags: a loop of them left the mount unable to send anything.
     */
    @Test
    void readsIntoABufferThatCannotBeWrittenFailAndLeakNothing(SharedSandbox.Booted box) throws Exception {
        String script = String.join("\n",
                "import ctypes, errno, os",
                "libc = ctypes.CDLL(None, use_errno=True)",
                "libc.mmap.restype = ctypes.c_void_p",
                "libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,"
                        + " ctypes.c_long]",
                "libc.read.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]",
                "data = os.urandom(8192)",
                "open('f', 'wb').write(data)",
                "ro = libc.mmap(None, 8192, 1, 0x22, -1, 0)  # PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS",
                "fd = os.open('f', os.O_RDONLY)",
                "faults = 0",
                "for i in range(70000):",
                "    if libc.read(fd, ro, 4096) == -1 and ctypes.get_errno() == errno.EFAULT:",
                "        faults += 1",
                "    os.lseek(fd, 0, 0)",
                "assert os.pread(fd, 8192, 0) == data, 'a read after them'",
                "print(faults)");
        Files.createDirectories(box.workspace().resolve("efault"));
        Files.writeString(box.workspace().resolve("efault/efault.py"), script);
        Kosa.Result r = sh(box, "efault", "python3 efault.py", Duration.ofMinutes(5));
        assertThat(r.stdout().strip()).as(r.toString()).isEqualTo("70000");
    }

    /**
     * More writes at once than the port's transmit queue holds (1,024 entries: virtio-mmio offers QEMU's
     * largest ring), with the daemon stopped (SIGSTOP) while they are sent: QEMU keeps what its socket
     * does not take, the queue fills and the writers wait for room (the module's tx_waits counts them).
     * Once the daemon runs again every file must land intact.
     */
    @Test
    @Tag("long") // the default suite took 36.9 min on 2026-12-05 (goal 30): ~47 s of stress
    void moreConcurrentWritesThanThePortsQueueHoldsAllLandIntact(SharedSandbox.Booted box) throws Exception {
        assumeKernelTransport();
        String script = String.join("\n",
                "import os, threading, hashlib, time",
                "data = os.urandom(8192)",
                "fds = [os.open('f%d' % i, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) for i in range(1200)]",
                "def waits(): return int(open('/sys/module/kosa8_ws9p/parameters/tx_waits').read())",
                "w0 = waits()",
                "open('ready', 'w').close()",
                // the test stops the daemon once it sees 'ready'; the writers start only once a request to it has
                // gone unanswered for a second, so none of them is served before the queue fills (a fixed sleep
                // here raced the stop on a loaded host)
                "asked = [None]",
                "def probe():",
                "    while True:",
                "        asked[0] = time.monotonic()",
                "        os.stat('ready')",
                "        asked[0] = None",
                "        time.sleep(0.05)",
                "threading.Thread(target=probe, daemon=True).start()",
                "while asked[0] is None or time.monotonic() - asked[0] < 1.0:",
                "    time.sleep(0.05)",
                "def write(fd):",
                "    v = memoryview(data)",
                "    while v:",
                "        v = v[os.write(fd, v[:4096]):]",
                "    os.close(fd)",
                "ts = [threading.Thread(target=write, args=(fd,)) for fd in fds]",
                "for t in ts: t.start()",
                // the test keeps the daemon stopped until every writer has started: it sees this line waiting,
                // unread by the stopped daemon, in the kernel's queue of the console's socket
                "with open('/dev/console', 'w') as c: c.write('kosa8-test: all writers started\\n')",
                "for t in ts: t.join()",
                "print(waits() - w0)",
                "print(hashlib.sha256(data).hexdigest())");
        String status = Kosa.ok(Duration.ofMinutes(1), "daemon", "status").stdout();
        String daemon = status.replaceAll("(?s).* pid (\\d+) .*", "$1").strip();
        assertThat(daemon).as(status).matches("[0-9]+");
        Files.createDirectories(box.workspace().resolve("crowd"));
        Files.writeString(box.workspace().resolve("crowd/crowd.py"), script + "\n");
        sh(box, "crowd", "setsid sh -c 'python3 crowd.py > /tmp/crowd.out 2>&1; touch /tmp/crowd.done'"
                + " < /dev/null > /dev/null 2>&1 &");
        Path ready = box.workspace().resolve("crowd/ready");
        Instant deadline = Instant.now().plus(Duration.ofMinutes(2));
        while (!Files.exists(ready)) {
            assertThat(Instant.now()).as("the writers opened their files").isBefore(deadline);
            Thread.sleep(100);
        }
        // the guest's console goes to the daemon through a socket QEMU serves (ConsolePump), in this QEMU's runtime
        // folder or, after a rewind, its alt one
        Path run = Kosa.HOME.resolve("run").resolve(box.id());
        List<Path> consoleSockets = List.of(run.resolve("console.sock"), run.resolve("alt/console.sock"));
        new ProcessBuilder("kill", "-STOP", daemon).inheritIO().start().waitFor();
        try {
            // at least 12 s, and until the guest says every writer has started (on a loaded host 1,200 threads
            // under TCG took longer than 12 s to start, and too few writes were outstanding to fill the queue).
            // The stopped daemon reads nothing, so the guest's line waits in the kernel's queue of the daemon's
            // end of the console socket; the test looks at it there without taking it (UnreadSocketBytes)
            Thread.sleep(12_000);
            Instant started = Instant.now().plus(Duration.ofMinutes(5));
            while (!UnreadSocketBytes.of(Long.parseLong(daemon), consoleSockets, 1 << 20)
                    .contains("kosa8-test: all writers started") && Instant.now().isBefore(started)) {
                Thread.sleep(200);
            }
            Thread.sleep(2_000); // the last writers from their start to their first write
        } finally {
            new ProcessBuilder("kill", "-CONT", daemon).inheritIO().start().waitFor();
        }
        Kosa.Result r = sh(box, "crowd", "for i in $(seq 1 1200); do [ -e /tmp/crowd.done ] && break; sleep 0.1;"
                + " done; cat /tmp/crowd.out");
        String[] lines = r.stdout().strip().split("\n");
        assertThat(lines).as(r.toString()).hasSize(2);
        assertThat(Long.parseLong(lines[0])).as("writers that waited for room in the queue").isPositive();
        Path dir = box.workspace().resolve("crowd");
        for (int i = 0; i < 1200; i++) {
            assertThat(Kosa.sha256(dir.resolve("f" + i))).as("f" + i).isEqualTo(lines[1]);
        }
    }

    @Test
    void editsOnEitherSideAreSeenOnTheOtherAtOnce(SharedSandbox.Booted box) throws Exception {
        Path f = box.workspace().resolve("live.txt");
        Files.writeString(f, "host v1\n");
        assertThat(box.exec("cat", "live.txt").stdout()).isEqualTo("host v1\n");
        Files.writeString(f, "host v2, longer\n");
        assertThat(box.exec("cat", "live.txt").stdout()).as("no stale cache in the guest").isEqualTo("host v2, longer\n");
        box.exec("sh", "-c", "echo 'guest v3' > live.txt");
        assertThat(f).content(StandardCharsets.UTF_8).isEqualTo("guest v3\n");
        Files.delete(f);
        assertThat(box.exec("sh", "-c", "test -e live.txt || echo gone").stdout()).isEqualTo("gone\n");
        Files.createDirectory(box.workspace().resolve("made-on-host"));
        assertThat(box.exec("sh", "-c", "test -d made-on-host && echo dir").stdout()).isEqualTo("dir\n");
        assertThat(Files.exists(box.workspace().resolve("made-on-host"), LinkOption.NOFOLLOW_LINKS)).isTrue();
    }

}
