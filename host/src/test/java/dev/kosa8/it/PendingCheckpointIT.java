package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Checkpoints that return at their instant and commit in the background
 * (docs/checkpoints.md, "Committing in the background"): a rewind to one
 * still pending waits for it and lands exactly on its instant; two taken
 * back to back both commit, in order; a sandbox removed while one commits
 * leaves nothing behind; a commit that fails, or that a daemon's death cuts
 * short, leaves the checkpoint failed with the reason and every earlier one
 * usable. Each test stands alone on the class's sandbox (or one of its own).
 */
class PendingCheckpointIT {
    static final Duration T = Duration.ofMinutes(3);
    static Path folder;
    static String id;

    @BeforeAll
    static void boot() throws Exception {
        folder = Kosa.HOME.resolveSibling("it-workspaces").resolve("PendingCheckpointIT");
        if (Files.exists(folder)) {
            Kosa.deleteTree(folder);
        }
        Files.createDirectories(folder);
        folder = folder.toRealPath();
        id = Kosa.ok(Duration.ofMinutes(15), "create", "--memory", "256M", "--workspace", folder.toString())
                .stdout().strip();
        // a process that counts in memory and appends each number to a file in the workspace and one on the disk
        Kosa.Result started = sh("""
                nohup sh -c 'i=0; while :; do i=$((i+1)); echo $i >> /workspace/counter.log; \
                echo $i >> /root/counter.log; sleep 0.3; done' > /dev/null 2>&1 &
                """);
        assertThat(started.exitCode()).as(started.toString()).isZero();
    }

    @AfterAll
    static void remove() {
        if (id != null) {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
        }
    }

    static Kosa.Result sh(String script) {
        return Kosa.run(T, "exec", id, "--", "sh", "-c", script);
    }

    static Path checkpointDir(String sandbox) {
        return Kosa.HOME.resolve("data/sandboxes").resolve(sandbox).resolve("checkpoints");
    }

    static List<Integer> numbers(String text) {
        return text.lines().filter(l -> !l.isBlank()).map(Integer::parseInt).toList();
    }

    static void assertConsecutiveFromOne(List<Integer> n, String what) {
        assertThat(n).as(what).isNotEmpty();
        for (int i = 0; i < n.size(); i++) {
            assertThat(n.get(i)).as("%s line %d of %s", what, i + 1, n).isEqualTo(i + 1);
        }
    }

    /** Each checkpoint's state as `kosa8 checkpoints` shows it, by id. */
    static java.util.Map<String, String> states(String sandbox) {
        java.util.Map<String, String> states = new java.util.LinkedHashMap<>();
        for (String line : Kosa.ok(T, "checkpoints", sandbox).stdout().lines().skip(1).toList()) {
            // id, created, size ("-" or a number and its unit), state, message
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("^(\\S+)\\s+\\S+\\s+(?:-|\\S+ \\S+)\\s+"
                    + "(pending|committed|failed)\\b").matcher(line);
            assertThat(m.find()).as("a checkpoint's line: %s", line).isTrue();
            states.put(m.group(1), m.group(2));
        }
        return states;
    }

    /** Waits until checkpoint {@code c} is no longer pending; returns its state. */
    static String settled(String sandbox, String c) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        while (System.nanoTime() < deadline) {
            String state = states(sandbox).get(c);
            if (!"pending".equals(state)) {
                return state;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("checkpoint " + c + " was still pending after 3 minutes" + Kosa.consoles());
    }

    @Test
    void aRewindToAPendingCheckpointWaitsForItsCommitAndPutsEverythingBackToItsInstant() throws Exception {
        Kosa.Result cp = Kosa.ok(T, "checkpoint", id, "-m", "pending");
        String c = cp.stdout().strip();
        assertThat(cp.stderr()).as("it returned at its instant, its memory still being saved")
                .contains("stood still for").contains("runs on while its memory is saved");
        int atCheckpoint = numbers(Files.readString(folder.resolve("counter.log"))).size();
        sh("echo later > /workspace/later.txt; echo later > /root/later.txt; sync");

        Kosa.Result rewind = Kosa.ok(T, "rewind", id, c);
        assertThat(rewind.stdout().strip()).isEqualTo(c);
        assertThat(states(id).get(c)).as("the rewind waited for its commit").isEqualTo("committed");
        Thread.sleep(2000); // the counter runs on from the instant
        List<Integer> workspace = numbers(Files.readString(folder.resolve("counter.log")));
        List<Integer> disk = numbers(sh("cat /root/counter.log").stdout());
        assertConsecutiveFromOne(workspace, "the workspace's counter");
        assertConsecutiveFromOne(disk, "the root disk's counter");
        assertThat(workspace.size()).as("the numbers written after the instant are gone")
                .isLessThan(atCheckpoint + 12);
        assertThat(folder.resolve("later.txt")).doesNotExist();
        assertThat(sh("test -e /root/later.txt; echo $?").stdout().strip()).isEqualTo("1");
    }

    @Test
    void twoCheckpointsTakenBackToBackBothCommitInOrder() throws Exception {
        String one = Kosa.ok(T, "checkpoint", id, "-m", "one").stdout().strip();
        sh("echo two > /root/which; sync");
        String two = Kosa.ok(T, "checkpoint", id, "-m", "two").stdout().strip();
        assertThat(settled(id, one)).isEqualTo("committed");
        assertThat(settled(id, two)).isEqualTo("committed");
        // the second compared its pages with the first, which was committed before it
        Path dir = checkpointDir(id);
        assertThat(new String(Files.readAllBytes(dir.resolve(two + ".ram")), java.nio.charset.StandardCharsets.ISO_8859_1))
                .as("the second's image names the first's pack").contains(one);
        List<String> listed = states(id).keySet().stream().toList();
        assertThat(listed.indexOf(one)).isLessThan(listed.indexOf(two));
        Kosa.ok(T, "rewind", id, one);
        assertThat(sh("cat /root/which 2>/dev/null; true").stdout()).doesNotContain("two");
        Kosa.ok(T, "rewind", id, two);
        assertThat(sh("cat /root/which").stdout().strip()).isEqualTo("two");
    }

    @Tag("long") // the default suite took 35.7 min on a clean clone on 2026-12-05 (goal 30): ./run-tests long
    @Test
    void aSandboxRemovedWhileItsCheckpointCommitsLeavesNoWorkAndNoFileBehind() throws Exception {
        Path other = Kosa.HOME.resolveSibling("it-workspaces").resolve("PendingCheckpointIT-removed");
        if (Files.exists(other)) {
            Kosa.deleteTree(other);
        }
        Files.createDirectories(other);
        String removed = Kosa.ok(Duration.ofMinutes(15), "create", "--memory", "256M", "--workspace",
                other.toRealPath().toString(), "--net", "none").stdout().strip();
        Kosa.Result cp = Kosa.ok(T, "checkpoint", removed);
        assertThat(cp.stderr()).contains("runs on while its memory is saved");
        Kosa.ok(T, "rm", "-f", removed);

        assertThat(Kosa.HOME.resolve("data/sandboxes").resolve(removed)).doesNotExist();
        assertThat(Kosa.HOME.resolve("run").resolve(removed)).doesNotExist();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        List<String> left;
        do {
            // the stream's writer, QEMU and anything else working for it name its directory
            left = ProcessHandle.allProcesses().filter(p -> p.info().commandLine().orElse("").contains(removed))
                    .map(p -> p.pid() + " " + p.info().commandLine().orElse("")).toList();
        } while (!left.isEmpty() && System.nanoTime() < deadline);
        assertThat(left).as("no process works for the removed sandbox").isEmpty();
        assertThat(Kosa.ok(T, "ls", "-q").stdout()).doesNotContain(removed);
        Kosa.deleteTree(other);
    }

    /**
     * The checkpoint directory moves onto a tmpfs with room for the checks at
     * the instant; once the instant is fixed the test fills it, so the
     * commit, still writing the RAM, finds no room.
     */
    @Test
    void aCommitThatFindsNoRoomIsMarkedFailedWithTheReasonAndEarlierCheckpointsStayUsable() throws Exception {
        assumeThat(new com.sun.security.auth.module.UnixSystem().getUid()).as("mounting a tmpfs needs root").isZero();
        sh("echo before > /workspace/state; echo before > /root/state; sync");
        String before = Kosa.ok(T, "checkpoint", id, "--wait", "-m", "before").stdout().strip();
        Path dir = checkpointDir(id);
        long have;
        try (var walk = Files.walk(dir)) {
            have = walk.filter(Files::isRegularFile).mapToLong(f -> f.toFile().length()).sum();
        }
        Path real = dir.resolveSibling("checkpoints.real");
        Files.move(dir, real);
        Files.createDirectory(dir);
        // room for what it holds, and for the guest's 256 MiB and the 64 MiB margin the instant checks for
        run("mount", "-t", "tmpfs", "-o", "size=" + ((have >> 20) + 256 + 64 + 32) + "m,mode=700", "tmpfs",
                dir.toString());
        try {
            run("cp", "-a", real + "/.", dir.toString());
            sh("echo later > /workspace/state; echo later > /root/state; sync");
            // the disk is filled as soon as the checkpoint returns at its instant, in one fallocate; a commit that
            // finished before that (a 256 MiB guest's, on a quick machine) found room, and the case is taken again
            Path filler = dir.resolve("filler");
            String found = null;
            for (int attempt = 1; attempt <= 3 && found == null; attempt++) {
                Kosa.Result cp = Kosa.ok(T, "checkpoint", id, "-m", "finds no room");
                String c = cp.stdout().strip();
                assertThat(cp.stderr()).contains("runs on while its memory is saved");
                fill(dir, filler);
                String state = settled(id, c);
                if (state.equals("committed")) {
                    Files.delete(filler);
                    Kosa.ok(T, "checkpoint", "rm", id, c);
                    continue;
                }
                assertThat(state).isEqualTo("failed");
                found = c;
            }
            assertThat(found).as("a commit that finds no room, in 3 tries").isNotNull();
            String failing = found;
            Files.delete(filler);

            String listed = Kosa.ok(T, "checkpoints", id).stdout();
            assertThat(listed).as("it says why").containsPattern(failing + ".*failed: .*No space left on device");
            Kosa.Result refused = Kosa.run(T, "rewind", id, failing);
            assertThat(refused.exitCode()).as(refused.toString()).isNotZero();
            assertThat(refused.stderr()).contains(failing).contains("failed").contains("No space left on device");
            // nothing of it is left but its record, and the sandbox runs on
            try (var files = Files.list(dir)) {
                assertThat(files.map(f -> f.getFileName().toString()).filter(n -> n.startsWith(failing)).toList())
                        .containsExactly(failing + ".json");
            }
            assertThat(dir.resolve("ram").resolve(failing + ".pages")).doesNotExist();
            assertThat(dir.resolve("workspace/manifests").resolve(failing + ".json")).doesNotExist();
            // the held layer's copy, made in the pause before the commit began, was taken back with the rest
            assertThat(dir.resolve("held/manifests").resolve(before + ".json")).exists();
            assertThat(dir.resolve("held/manifests").resolve(failing + ".json")).doesNotExist();
            Process snapshots = new ProcessBuilder("qemu-img", "snapshot", "-l", "-U", Kosa.HOME
                    .resolve("data/sandboxes").resolve(id).resolve("root.qcow2").toString())
                    .redirectErrorStream(true).start();
            assertThat(new String(snapshots.getInputStream().readAllBytes())).contains(before).doesNotContain(failing);
            assertThat(sh("cat /root/state").stdout().strip()).isEqualTo("later");

            Kosa.ok(T, "rewind", id, before);
            assertThat(sh("cat /root/state").stdout().strip()).isEqualTo("before");
            assertThat(Files.readString(folder.resolve("state")).strip()).isEqualTo("before");
            Kosa.ok(T, "checkpoint", "rm", id, failing);
            assertThat(states(id)).doesNotContainKey(failing).containsKey(before);
        } finally {
            new ProcessBuilder("umount", "-l", dir.toString()).inheritIO().start().waitFor();
            Kosa.deleteTree(dir);
            Files.move(real, dir);
        }
    }

    @Tag("long") // the default suite took 35.7 min on a clean clone on 2026-12-05 (goal 30): ./run-tests long
    @Test
    void aCheckpointWhoseCommitADaemonsDeathCutShortIsMarkedFailedAndTheNextOneWorks() throws Exception {
        String before = Kosa.ok(T, "checkpoint", id, "--wait", "-m", "committed").stdout().strip();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(" pid (\\d+) ")
                .matcher(Kosa.ok(T, "daemon", "status").stdout());
        assertThat(m.find()).isTrue();
        String cut = Kosa.ok(T, "checkpoint", id, "-m", "cut short").stdout().strip();
        new ProcessBuilder("kill", "-9", m.group(1)).start().waitFor();

        // a new daemon starts, finds it pending with no commit under way, and marks it failed
        assertThat(settled(id, cut)).isEqualTo("failed");
        assertThat(Kosa.ok(T, "checkpoints", id).stdout()).containsPattern(cut + ".*failed: .*cut short");
        Kosa.Result refused = Kosa.run(T, "rewind", id, cut);
        assertThat(refused.exitCode()).as(refused.toString()).isNotZero();
        assertThat(refused.stderr()).contains("cut short");
        assertThat(Kosa.ok(T, "exec", id, "--", "echo", "alive").stdout().strip()).isEqualTo("alive");

        // the next checkpoint waits for the stream the dead daemon left, and sweeps what the failed one named
        String next = Kosa.ok(T, "checkpoint", id, "--wait", "-m", "after").stdout().strip();
        Path dir = checkpointDir(id);
        try (var files = Files.list(dir)) {
            assertThat(files.map(f -> f.getFileName().toString()).filter(n -> n.startsWith(cut)).toList())
                    .as("only its record is left").containsExactly(cut + ".json");
        }
        for (String layer : List.of("workspace", "held")) {
            assertThat(dir.resolve(layer).resolve("manifests").resolve(cut + ".json")).as(layer).doesNotExist();
            assertThat(dir.resolve(layer).resolve("manifests").resolve(next + ".json")).as(layer).exists();
        }
        assertThat(states(id)).containsEntry(before, "committed").containsEntry(next, "committed");
        Kosa.ok(T, "rewind", id, before);
        assertConsecutiveFromOne(numbers(sh("cat /root/counter.log").stdout()), "the root disk's counter");
    }

    /** The pages of the guest process's buffer in {@link #eachCheckpointsRamIsExactlyItsInstantsAfterRewindsInAnyOrder}. */
    static final int RAM_PAGES = 4096;

    /**
     * What the guest process's buffer holds after generations 0 to {@code last}: generation {@code g} writes its
     * number and the page's into every page {@code p} with {@code (7p + g) % 5 == 0}, a fifth of them, so each
     * checkpoint's RAM differs from the one before in some pages and shares the rest with it.
     */
    static String expectedRam(int last) throws Exception {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(RAM_PAGES * 4096).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (int g = 0; g <= last; g++) {
            for (int p = 0; p < RAM_PAGES; p++) {
                if ((p * 7 + g) % 5 == 0) {
                    b.putLong(p * 4096, g).putLong(p * 4096 + 8, p);
                }
            }
        }
        return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(b.array()));
    }

    /** Asks the guest process to run {@code command} and waits for its answer: the SHA-256 of its buffer. */
    static String askRam(String command) throws Exception {
        String nonce = Long.toHexString(System.nanoTime());
        Kosa.Result sent = sh("echo '" + command + " " + nonce + "' > /root/ram-cmd.tmp && mv /root/ram-cmd.tmp /root/ram-cmd");
        assertThat(sent.exitCode()).as(sent.toString()).isZero();
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (System.nanoTime() < deadline) {
            String ack = sh("cat /root/ram-ack 2>/dev/null").stdout().strip();
            if (ack.startsWith(nonce + " ")) {
                return ack.substring(nonce.length() + 1);
            }
            Thread.sleep(300);
        }
        throw new AssertionError("the guest's RAM process did not answer '" + command + "'" + Kosa.consoles());
    }

    /**
     * A checkpoint keeps only the pages that changed since the one before (docs/checkpoints.md, "RAM kept as
     * pages"): a guest process changes a fifth of a 16 MiB buffer in memory (never on disk) between checkpoints,
     * and a rewind to each of them, in an order that is not the order they were taken in, finds the buffer exactly
     * as it was at that checkpoint's instant, page for page (its SHA-256 against a model of the writes).
     */
    @Test
    // 45 s; the default suite took 33.9 min on a clean clone at ac369ac (goal 30): ./run-tests long. A rewind's
    // exactness stays in the default suite (CheckpointIT.aRewindPutsProcessRamDiskAndWorkspaceBackToOneInstant)
    @Tag("long")
    void eachCheckpointsRamIsExactlyItsInstantsAfterRewindsInAnyOrder() throws Exception {
        Kosa.Result started = sh("""
                cat > /root/ramtest.py << 'EOF'
                import hashlib, os, struct, time
                N = %d
                b = bytearray(N * 4096)
                last = None
                while True:
                    try:
                        with open('/root/ram-cmd') as f:
                            cmd = f.read().split()
                    except OSError:
                        cmd = []
                    if cmd and cmd != last:
                        last = cmd
                        if cmd[0] == 'write':
                            g = int(cmd[1])
                            for p in range(N):
                                if (p * 7 + g) %% 5 == 0:
                                    struct.pack_into('<QQ', b, p * 4096, g, p)
                        with open('/root/ram-ack.tmp', 'w') as f:
                            f.write(cmd[-1] + ' ' + hashlib.sha256(b).hexdigest() + '\\n')
                        os.replace('/root/ram-ack.tmp', '/root/ram-ack')
                    time.sleep(0.1)
                EOF
                rm -f /root/ram-cmd /root/ram-ack
                nohup python3 /root/ramtest.py > /root/ramtest.out 2>&1 &
                echo $! > /root/ramtest.pid
                """.formatted(RAM_PAGES));
        assertThat(started.exitCode()).as(started.toString()).isZero();
        try {
            int n = 4;
            String[] ids = new String[n];
            for (int k = 0; k < n; k++) {
                assertThat(askRam("write " + k)).as("the buffer after generation %d, before its checkpoint", k)
                        .isEqualTo(expectedRam(k));
                // pending: the next one waits for its commit, and is compared with it page by page
                ids[k] = Kosa.ok(T, "checkpoint", id, "-m", "ram " + k).stdout().strip();
            }
            assertThat(askRam("write " + n)).as("a change after the last checkpoint").isEqualTo(expectedRam(n));
            for (int k : List.of(2, 0, 3, 1)) {
                Kosa.ok(T, "rewind", id, ids[k]);
                assertThat(askRam("hash")).as("the buffer after a rewind to checkpoint %d (%s)", k, ids[k])
                        .isEqualTo(expectedRam(k));
            }
        } finally {
            sh("kill $(cat /root/ramtest.pid) 2>/dev/null; rm -f /root/ramtest.*");
        }
    }

    /**
     * Takes every byte left on {@code dir}'s file system into {@code filler}: most of it in one fallocate (the
     * commit writing beside it may take some meanwhile: then again with what is left), the rest written until the
     * file system says it is full.
     */
    static void fill(Path dir, Path filler) throws Exception {
        for (int i = 0; i < 5; i++) {
            long most = Files.getFileStore(dir).getUsableSpace() - (1 << 20);
            if (most <= 0) {
                break;
            }
            Process p = new ProcessBuilder("fallocate", "-o", Long.toString(Files.exists(filler) ? Files.size(filler) : 0),
                    "-l", Long.toString(most), filler.toString()).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            if (p.waitFor() == 0) {
                break;
            }
        }
        try (var out = Files.newOutputStream(filler, java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND)) {
            byte[] block = new byte[64 << 10];
            while (true) {
                out.write(block);
            }
        } catch (java.io.IOException e) {
            assertThat(e.getMessage()).contains("No space left on device");
        }
    }

    static void run(String... argv) throws Exception {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(String.join(" ", argv) + ": " + out).isZero();
    }
}
