package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Undo, in a real guest: a checkpoint of the whole running machine and a
 * rewind in place. A guest process counts in memory and appends each number
 * to a file in the workspace and to one on the root disk; after a rewind the
 * process, both files and the workspace must all agree on the checkpoint's
 * instant: the numbers go on from there with no gap and no repeat.
 *
 * <p>The tests share one running sandbox where they can (a boot under TCG is
 * the expensive part), and each sets up what it checks: its own counting
 * process, its own checkpoints, its own files. None relies on what another
 * did or on the order they run in. The test that measures a first checkpoint
 * against the template gets a sandbox just made; the one that removes the
 * sandbox leaves the next test a new one ({@link ReplaceableSandbox}).
 */
class CheckpointIT {
    static final Duration T = Duration.ofMinutes(3);

    @RegisterExtension
    static final ReplaceableSandbox SANDBOX = new ReplaceableSandbox("CheckpointIT", "--memory", "256M");

    /** The sandbox this test uses and its folder on the host, set by {@link #use}. */
    String id;
    Path folder;

    void use(SharedSandbox.Booted box) {
        id = box.id();
        folder = box.workspace();
    }

    Kosa.Result sh(String script) {
        return Kosa.run(T, "exec", id, "--", "sh", "-c", script);
    }

    /**
     * Runs {@code script} once every other guest process whose command line holds {@code marker} is ended (one an
     * earlier test left running, say). The pattern's last character in brackets keeps grep from matching itself;
     * the script's own shell, whose text holds the marker too, is spared. One grep for all: under TCG each program
     * the guest starts costs tens of milliseconds.
     */
    Kosa.Result afterEnding(String marker, String script) {
        String pattern = marker.substring(0, marker.length() - 1) + "[" + marker.charAt(marker.length() - 1) + "]";
        return sh("grep -ls '" + pattern + "' /proc/[0-9]*/cmdline > /tmp/ending; "
                + "while read f; do p=${f#/proc/}; p=${p%/cmdline}; [ $p = $$ ] || kill $p; done < /tmp/ending\n"
                + script);
    }

    /**
     * Starts the counting process, numbering from 1 in fresh files: one an earlier test left running is ended
     * first, as it would write on into the same files.
     */
    Kosa.Result startCounting() {
        return afterEnding("/root/counter.log", START_COUNTING);
    }

    /**
     * The guest's counting process, started afresh: it counts in memory and appends each number to a file in the
     * folder and to one on the root disk ({@code /workspace/counter.log}, {@code /root/counter.log}), every 0.3 s.
     */
    static final String START_COUNTING = """
            rm -f /workspace/counter.log /root/counter.log
            nohup sh -c 'i=0; while :; do i=$((i+1)); echo $i >> /workspace/counter.log; \
            echo $i >> /root/counter.log; sleep 0.3; done' > /dev/null 2>&1 &
            """;

    /** {@link #startCounting}, once it has counted to 3. */
    void countingFromOne() throws InterruptedException {
        Kosa.Result start = startCounting();
        assertThat(start.exitCode()).as(start.toString()).isZero();
        waitForCount(3);
    }

    /** The numbers in a counter file; fails with the file when a line is not one. */
    static List<Integer> numbers(String text) {
        return text.lines().filter(l -> !l.isBlank()).map(Integer::parseInt).toList();
    }

    static void assertConsecutiveFromOne(List<Integer> n, String what) {
        for (int i = 0; i < n.size(); i++) {
            assertThat(n.get(i)).as("%s line %d of %s", what, i + 1, n).isEqualTo(i + 1);
        }
    }

    void waitForCount(int atLeast) throws InterruptedException {
        waitForCount(() -> sh("cat /root/counter.log 2>/dev/null").stdout(), atLeast);
    }

    /** Waits, three minutes at most, until the root disk's counter (as {@code counterLog} reads it) has {@code atLeast} numbers. */
    static void waitForCount(java.util.function.Supplier<String> counterLog, int atLeast) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        while (System.nanoTime() < deadline) {
            if (numbers(counterLog.get()).size() >= atLeast) {
                return;
            }
            Thread.sleep(500);
        }
        throw new AssertionError("the counter did not reach " + atLeast + Kosa.consoles());
    }

    @Test
    void aRewindPutsProcessRamDiskAndWorkspaceBackToOneInstant() throws Exception {
        use(SANDBOX.running());
        // at the checkpoint: a file to be deleted later, none of those made later, the counter from 1
        Files.writeString(folder.resolve("keep.txt"), "kept\n");
        Files.deleteIfExists(folder.resolve("later.txt"));
        sh("rm -f /root/later.txt");
        Kosa.Result start = startCounting();
        assertThat(start.exitCode()).as(start.toString()).isZero();
        waitForCount(3);

        Kosa.Result cp = Kosa.ok(T, "checkpoint", id, "-m", "counter running");
        String first = cp.stdout().strip();
        assertThat(first).matches("c\\d{8}T\\d{6}-[0-9a-f]{4}");
        assertThat(cp.stderr()).contains("stood still for");

        int atCheckpoint = numbers(Files.readString(folder.resolve("counter.log"))).size();
        long standby = awaitStandby();
        waitForCount(atCheckpoint + 6);
        Files.delete(folder.resolve("keep.txt"));
        sh("echo later > /workspace/later.txt; echo later > /root/later.txt; chmod 600 /workspace/counter.log; "
                + "echo later >> /workspace/counter.log; sync");
        assertThat(folder.resolve("later.txt")).exists();

        Kosa.Result rewind = Kosa.ok(T, "rewind", id);
        assertThat(rewind.stdout().strip()).isEqualTo(first);
        // read at once: the restored process counts on, so the later time is read, the more numbers it has added
        // (waiting for the next standby first made this depend on how fast the host starts a QEMU)
        String rewound = Files.readString(folder.resolve("counter.log"));
        assertThat(rewound).as("the later timeline's line is gone").doesNotContain("later");
        assertThat(numbers(rewound).size()).as("numbers the later timeline wrote are gone")
                .isLessThan(atCheckpoint + 6 + 3);
        assertThat(recordedQemu()).as("the rewind loaded the machine into the standby QEMU").isEqualTo(standby);
        assertThat(awaitStandby()).as("and a new standby waits for the next rewind").isNotEqualTo(standby);
        Thread.sleep(2000); // the process runs on for a few numbers

        List<Integer> workspace = numbers(Files.readString(folder.resolve("counter.log")));
        List<Integer> disk = numbers(sh("cat /root/counter.log").stdout());
        assertConsecutiveFromOne(workspace, "the workspace's counter");
        assertConsecutiveFromOne(disk, "the root disk's counter");
        assertThat(workspace.size()).as("the restored process runs on").isGreaterThan(numbers(rewound).size());
        assertThat(folder.resolve("keep.txt")).hasContent("kept");
        assertThat(folder.resolve("later.txt")).doesNotExist();
        assertThat(sh("test -e /root/later.txt; echo $?").stdout().strip()).isEqualTo("1");
        assertThat(Files.getPosixFilePermissions(folder.resolve("counter.log")))
                .contains(java.nio.file.attribute.PosixFilePermission.GROUP_READ);
    }

    @Test
    @Tag("long") // ~20 s; the default suite took 30.9 min on a clean clone on 2026-12-06 (goal 30). Listing and
    // removing checkpoints stay in it (BoundsIT, PendingCheckpointIT, FolderDiffIT): ./run-tests long
    void checkpointsAreListedWithTheirSpaceAndCanBeRemoved() throws Exception {
        // a sandbox made from the template for this test: its first checkpoint has only the template before it,
        // and no other checkpoint is there. The first is taken with the counter running, the second a few seconds
        // after a rewind to the first.
        use(SANDBOX.justMade());
        countingFromOne();
        String first = Kosa.ok(T, "checkpoint", id, "-m", "counter running").stdout().strip();
        awaitStandby();
        Kosa.ok(T, "rewind", id, first);
        Thread.sleep(2000); // the process runs on for a few numbers

        // --wait: its files are looked at below, so it must be committed when the command returns
        Kosa.Result second = Kosa.ok(T, "checkpoint", id, "--wait", "-m", "second");
        String two = second.stdout().strip();
        Kosa.Result list = Kosa.ok(T, "checkpoints", id);
        assertThat(list.stdout()).contains(first, "counter running", two, "second");
        // RAM is kept as pages: the second checkpoint stores only those changed since the first, which the
        // machine was rewound to, not all the guest's memory in use again
        Path dir = Kosa.HOME.resolve("data/sandboxes").resolve(id).resolve("checkpoints");
        assertThat(dir.resolve(two + ".ram")).exists();
        assertThat(dir.resolve(two + ".vmstate")).doesNotExist();
        long firstBytes = machineBytes(dir, first);
        long secondBytes = machineBytes(dir, two);
        System.out.printf("machine state stored: first %d bytes, second %d bytes%n", firstBytes, secondBytes);
        // Compared with the first, not with the template: its image keeps unchanged pages where the first's pack
        // has them. And not all the memory in use again: the template's pack alone holds that much (the bound the
        // first meets too, below). (This was "less than half the first", a proxy that held while the first kept
        // most of the guest's memory; templates that rehearse the thaw and the CA's install made the first 15-16 MB,
        // about twice what a few seconds of a rewound guest write.)
        assertThat(new String(Files.readAllBytes(dir.resolve(two + ".ram")), java.nio.charset.StandardCharsets.ISO_8859_1))
                .as("the second's image names the first's pack").contains(first);
        long templateBytes = templatePackBytes(dir);
        assertThat(secondBytes).as("the second holds what changed since the first, not the RAM in use (the"
                + " template's pack: %d bytes)", templateBytes).isLessThan(templateBytes / 4);
        Kosa.ok(T, "checkpoint", "rm", id, two);
        assertThat(Kosa.ok(T, "checkpoints", id).stdout()).contains(first).doesNotContain(two);
        assertThat(dir.resolve("ram").resolve(two + ".pages")).as("its pages went with it").doesNotExist();
        assertThat(dir.resolve("ram").resolve(first + ".pages")).exists();
        // and the first shares with the booted template the sandbox was made from: the template's pack, linked in
        // at the start, outlives the sweep above only because the first checkpoint's image uses it
        Path templatePack;
        try (var packs = Files.list(dir.resolve("ram"))) {
            templatePack = packs.filter(p -> p.getFileName().toString().startsWith("template-")).findFirst()
                    .orElseThrow(() -> new AssertionError("no template pack is used: " + dir.resolve("ram")));
        }
        String name = templatePack.getFileName().toString();
        Path template = Kosa.HOME.resolve("data/templates").resolve(name.substring("template-".length(),
                name.length() - ".pages".length()));
        assertThat(Files.isSameFile(templatePack, template.resolve("ram").resolve(name))).isTrue();
        try (var images = Files.list(dir)) {
            assertThat(images.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".ram")))
                    .as("only checkpoints' images are left").containsExactly(first + ".ram");
        }
        System.out.printf("template pack %d bytes%n", templateBytes);
        assertThat(Files.size(templatePack)).isEqualTo(templateBytes);
        assertThat(firstBytes).as("the first stores what changed since the template, not all the RAM in use, "
                + "of which the template alone holds %d bytes", templateBytes).isLessThan(templateBytes / 4);
    }

    /** The size of the template's pack a sandbox's checkpoints link to. */
    static long templatePackBytes(Path checkpoints) throws java.io.IOException {
        try (var packs = Files.list(checkpoints.resolve("ram"))) {
            Path pack = packs.filter(p -> p.getFileName().toString().startsWith("template-")).findFirst()
                    .orElseThrow(() -> new AssertionError("no template pack is used: " + checkpoints.resolve("ram")));
            return Files.size(pack);
        }
    }

    /** The bytes a checkpoint's machine state added on disk, as its record says (docs/files.md). */
    static long machineBytes(Path dir, String checkpoint) throws java.io.IOException {
        var record = new com.fasterxml.jackson.databind.ObjectMapper().readTree(dir.resolve(checkpoint + ".json")
                .toFile()).path("checkpoint");
        assertThat(record.path("vmStateBytes").isIntegralNumber()).as("a checkpoint record: %s", record).isTrue();
        return record.path("vmStateBytes").asLong();
    }

    /**
     * A checkpoint at which a process waits on a FIFO: once woken ({@link #wake}) it draws random bytes, and writes
     * what the guest has sent on its network by then, as {@code sentBefore} is just before the checkpoint.
     */
    record Waiting(String checkpoint, String sentBefore) {
    }

    /** What the waiting process wrote once woken: the random bytes it drew, and what the guest had sent. */
    record Woken(String random, String sent) {
    }

    Waiting waitingAtACheckpoint() throws Exception {
        // the process's files from an earlier test are gone before the checkpoint
        try (var files = Files.list(folder)) {
            for (Path f : files.filter(p -> p.getFileName().toString().matches("(random|sent)\\.\\d+")).toList()) {
                Files.delete(f);
            }
        }
        // it counts what the guest has sent on its network since the checkpoint: no announcement of itself,
        // which a QEMU asks for after a load unless told not to (five rounds in the first 0.8 s, each a gratuitous
        // ARP and an unsolicited IPv6 neighbour advertisement, on every network device). The guest has no network
        // device now, only loopback and the network link's port, so no device's counter can say it: counted instead
        // is every IP packet the guest's stack sent, IPv4 and IPv6, on any interface, which an announcement, or any
        // other network work a load set off in the guest, would add to; and advertisements. The counters are read
        // until two readings in a row agree.
        Files.writeString(folder.resolve("sent.sh"), """
                read_once() {
                  t=$(awk '$1 == "Ip:" && c { print $c }
                           $1 == "Ip:" && !c { for (k = 2; k <= NF; k++) if ($k == "OutRequests") c = k }' /proc/net/snmp)
                  i=$(awk '$1 == "Ip6OutRequests" { print $2 }' /proc/net/snmp6)
                  n=$(awk '$1 == "Icmp6OutNeighborAdvertisements" { print $2 }' /proc/net/snmp6)
                  echo $((t + i)) $n
                }
                a=$(read_once); b=$(read_once)
                while [ "$a" != "$b" ]; do sleep 0.05; a=$b; b=$(read_once); done
                echo "$a"
                """);
        sh("rm -f /root/go; mkfifo /root/go; nohup sh -c 'read x < /root/go; "
                + "sh /workspace/sent.sh > /workspace/sent.$x; "
                + "head -c 16 /dev/urandom | od -An -tx1 > /workspace/random.$x' > /dev/null 2>&1 &");
        Thread.sleep(1000);
        String sentBefore = sh("sh /workspace/sent.sh").stdout().strip();
        String cp = Kosa.ok(T, "checkpoint", id, "-m", "waiting for go").stdout().strip();
        return new Waiting(cp, sentBefore);
    }

    /** Wakes the process {@link #waitingAtACheckpoint} left waiting with {@code n}, and reads what it wrote. */
    Woken wake(int n) throws Exception {
        sh("echo " + n + " > /root/go");
        Path f = folder.resolve("random." + n);
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (!(Files.exists(f) && Files.size(f) > 0) && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
        return new Woken(Files.readString(f).strip(), Files.readString(folder.resolve("sent." + n)).strip());
    }

    @Test
    void twoRestoresOfOneCheckpointDrawDifferentRandomNumbers() throws Exception {
        // a process blocked on a FIFO at the checkpoint draws random bytes once woken after each restore, and
        // counts what the guest has sent on its network since the checkpoint
        use(SANDBOX.running());
        Waiting waiting = waitingAtACheckpoint();
        String sentBefore = waiting.sentBefore();
        assertThat(sentBefore).matches("\\d+ \\d+");
        String cp = waiting.checkpoint();
        String[] drawn = new String[2];
        for (int i = 0; i < 2; i++) {
            Kosa.ok(T, "rewind", id, cp);
            Thread.sleep(1500); // past the last round QEMU would announce in
            Woken woken = wake(i);
            drawn[i] = woken.random();
            assertThat(woken.sent())
                    .as("IP packets, and advertisements, sent by the time the guest woke after "
                            + "restore %d", i).isEqualTo(sentBefore);
        }
        assertThat(drawn[0]).isNotEmpty();
        assertThat(drawn[1]).as("the same RAM restored twice, reseeded each time").isNotEqualTo(drawn[0]);
    }

    @Test
    void aForkRunsOnFromTheCheckpointWithItsOwnDiskWorkspaceAndRandomness() throws Exception {
        // at the checkpoint: the counter from 1 and the process waiting on its FIFO. The original then draws
        // twice: woken where it stands, and again after a rewind to the checkpoint.
        use(SANDBOX.running());
        countingFromOne();
        String waiting = waitingAtACheckpoint().checkpoint();
        String[] drawn = new String[2];
        drawn[0] = wake(0).random();
        Kosa.ok(T, "rewind", id, waiting);
        drawn[1] = wake(1).random();
        assertThat(waiting).as("the checkpoint the process waits in").isNotNull();
        Path forkFolder = folder.resolveSibling("CheckpointIT-fork");
        if (Files.exists(forkFolder)) {
            Kosa.deleteTree(forkFolder);
        }
        Kosa.Result forked = Kosa.ok(Duration.ofMinutes(5), "fork", id, waiting, "--workspace", forkFolder.toString());
        String fork = forked.stdout().strip();
        assertThat(fork).matches("[0-9a-f]{12}").isNotEqualTo(id);
        assertThat(forked.stderr()).contains(forkFolder.toString());
        try {
            // its own copy of the workspace as it was at the checkpoint
            assertThat(forkFolder.resolve("counter.log")).exists();
            assertThat(forkFolder.resolve("random.0")).as("written after the checkpoint, in the original only")
                    .doesNotExist();
            // the process frozen at the checkpoint wakes in the fork, and draws its own random numbers
            Kosa.ok(T, "exec", fork, "--", "sh", "-c", "echo 9 > /root/go");
            Path f = forkFolder.resolve("random.9");
            long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
            while (!(Files.exists(f) && Files.size(f) > 0) && System.nanoTime() < deadline) {
                Thread.sleep(200);
            }
            String inFork = Files.readString(f).strip();
            assertThat(inFork).isNotEmpty().isNotEqualTo(drawn[0]).isNotEqualTo(drawn[1]);
            assertThat(folder.resolve("random.9")).as("the original's folder is not the fork's").doesNotExist();
            // its own disk: a file written in the fork is not in the original, and the other way
            Kosa.ok(T, "exec", fork, "--", "sh", "-c", "echo fork > /root/only-in-fork");
            sh("echo original > /root/only-in-original");
            assertThat(sh("test -e /root/only-in-fork; echo $?").stdout().strip()).isEqualTo("1");
            assertThat(Kosa.run(T, "exec", fork, "--", "sh", "-c", "test -e /root/only-in-original; echo $?")
                    .stdout().strip()).isEqualTo("1");
            // the counting process runs on in both, each on its own
            List<Integer> counted = numbers(Kosa.ok(T, "exec", fork, "--", "cat", "/root/counter.log").stdout());
            assertConsecutiveFromOne(counted, "the fork's counter");
            // its first checkpoint shares the pages of the checkpoint it was forked from: the packs that one uses
            // are linked into the fork's store, and it stores only what changed since
            String forkCheckpoint = Kosa.ok(T, "checkpoint", fork, "--wait").stdout().strip();
            Path forkDir = Kosa.HOME.resolve("data/sandboxes").resolve(fork).resolve("checkpoints");
            Path parentDir = Kosa.HOME.resolve("data/sandboxes").resolve(id).resolve("checkpoints");
            long linked = 0;
            try (var packs = Files.list(forkDir.resolve("ram"))) {
                for (Path pack : packs.toList()) {
                    if (!pack.getFileName().toString().equals(forkCheckpoint + ".pages")) {
                        assertThat(Files.isSameFile(pack, parentDir.resolve("ram").resolve(pack.getFileName())))
                                .as("%s is the parent's", pack).isTrue();
                        linked += Files.size(pack);
                    }
                }
            }
            long stored = machineBytes(forkDir, forkCheckpoint);
            System.out.printf("fork's first checkpoint stored %d bytes; the parent's packs it links hold %d%n",
                    stored, linked);
            assertThat(stored).as("what changed since the fork, not all RAM in use").isLessThan(linked / 4);
        } finally {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", fork);
            Kosa.deleteTree(forkFolder);
        }
        assertCounting();
    }

    // --- faults: nothing committed is lost, and the sandbox runs on ---

    List<String> checkpointIds() {
        return Kosa.ok(T, "checkpoints", id).stdout().lines().skip(1).map(l -> l.split("\\s+")[0]).toList();
    }

    void assertCounting() throws InterruptedException {
        int before = numbers(sh("cat /root/counter.log").stdout()).size();
        Thread.sleep(2500);
        int after = numbers(sh("cat /root/counter.log").stdout()).size();
        assertThat(after).as("the counting process runs on").isGreaterThan(before);
    }

    static boolean streamStarted(Path dir) throws java.io.IOException {
        if (!Files.isDirectory(dir)) {
            return false;
        }
        try (var files = Files.list(dir)) {
            return files.anyMatch(f -> f.getFileName().toString().endsWith(".vmstate.tmp") && f.toFile().length() > 0);
        }
    }

    @Test
    @Tag("long") // the default suite took 36.9 min on 2026-12-05 (goal 30): ~30 s, a crash case CrashWalkIT walks too
    void qemuKilledDuringACheckpointLosesNothingCommitted() throws Exception {
        // a committed checkpoint of the counter running from 1, to rewind to once QEMU is back
        use(SANDBOX.running());
        countingFromOne();
        // --wait: committed before QEMU dies, and its stream ended, so the stream watched for below is the next one's
        String first = Kosa.ok(T, "checkpoint", id, "--wait", "-m", "before QEMU is killed").stdout().strip();
        List<String> before = checkpointIds();
        long pid = com.fasterxml.jackson.databind.json.JsonMapper.builder().build()
                .readTree(Kosa.ok(T, "inspect", id).stdout()).path("qemuPid").asLong();
        assertThat(pid).isPositive();
        // kill QEMU while it writes the machine's RAM: once the stream's file has its first bytes
        Path dir = Kosa.HOME.resolve("data/sandboxes").resolve(id).resolve("checkpoints");
        var checkpoint = java.util.concurrent.CompletableFuture.supplyAsync(() -> Kosa.run(T, "checkpoint", id,
                "--wait"));
        long until = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (!streamStarted(dir)) {
            assertThat(System.nanoTime()).as("the checkpoint's machine state began to be written").isLessThan(until);
            assertThat(checkpoint).as("the checkpoint is still under way").isNotDone();
            Thread.sleep(5);
        }
        new ProcessBuilder("kill", "-9", Long.toString(pid)).start().waitFor();
        Kosa.Result failed = checkpoint.get();
        assertThat(failed.exitCode()).as(failed.toString()).isNotZero();
        assertThat(failed.stderr()).as("a clear error").contains("checkpoint");

        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (Kosa.ok(T, "inspect", id).stdout().contains("\"state\" : \"running\"") && System.nanoTime() < deadline) {
            Thread.sleep(200); // the daemon notices QEMU's death on its own
        }
        assertThat(Kosa.ok(T, "inspect", id).stdout()).contains("\"state\" : \"failed\"");
        Kosa.ok(Duration.ofMinutes(10), "start", id);
        assertThat(checkpointIds()).as("every committed checkpoint is still there").containsAll(before);
        Kosa.ok(T, "rewind", id, first);
        Thread.sleep(2000);
        assertConsecutiveFromOne(numbers(Files.readString(folder.resolve("counter.log"))), "the workspace's counter");
        assertConsecutiveFromOne(numbers(sh("cat /root/counter.log").stdout()), "the root disk's counter");
        assertCounting();
    }

    @Test
    void stopPausesToDiskAndStartResumesProcessesAndOpenFiles() throws Exception {
        // two checkpoints, one to remove while the sandbox is stopped and one to keep
        use(SANDBOX.running());
        String first = Kosa.ok(T, "checkpoint", id, "-m", "kept while stopped").stdout().strip();
        String waiting = Kosa.ok(T, "checkpoint", id, "-m", "removed while stopped").stdout().strip();
        // a process that holds one file open in the workspace and one on the root disk, writing a line to each
        // (in fresh files, any earlier writer of them ended)
        Kosa.Result started = afterEnding("/root/held.log", """
                rm -f /workspace/held.log /root/held.log
                nohup sh -c 'exec 3>>/workspace/held.log 4>>/root/held.log; i=0; \
                while :; do i=$((i+1)); echo $i >&3; echo $i >&4; sleep 0.3; done' > /dev/null 2>&1 &
                echo $!
                """);
        String pid = started.stdout().strip();
        assertThat(pid).as(started.toString()).matches("\\d+");
        Thread.sleep(2000);
        Kosa.ok(Duration.ofMinutes(5), "stop", id);
        assertThat(Kosa.ok(T, "inspect", id).stdout()).contains("\"state\" : \"stopped\"");
        int whileStopped = numbers(Files.readString(folder.resolve("held.log"))).size();
        Thread.sleep(1500);
        assertThat(numbers(Files.readString(folder.resolve("held.log")))).as("nothing runs while stopped")
                .hasSize(whileStopped);
        // a checkpoint of a stopped sandbox can be removed too (qemu-img, with no QEMU holding the disk)
        Kosa.ok(T, "checkpoint", "rm", id, waiting);
        assertThat(checkpointIds()).doesNotContain(waiting);
        Process list = new ProcessBuilder("qemu-img", "snapshot", "-l", Kosa.HOME.resolve("data/sandboxes").resolve(id)
                .resolve("root.qcow2").toString()).redirectErrorStream(true).start();
        assertThat(new String(list.getInputStream().readAllBytes())).contains(first).doesNotContain(waiting);

        Kosa.ok(Duration.ofMinutes(5), "start", id);
        Thread.sleep(2500);
        assertThat(sh("kill -0 " + pid + " && echo alive").stdout()).as("the same process runs on").contains("alive");
        List<Integer> workspace = numbers(Files.readString(folder.resolve("held.log")));
        List<Integer> disk = numbers(sh("cat /root/held.log").stdout());
        assertThat(workspace.size()).as("it went on writing through the descriptor it held").isGreaterThan(whileStopped);
        assertConsecutiveFromOne(workspace, "the workspace's file held open");
        assertConsecutiveFromOne(disk, "the root disk's file held open");
        assertThat(Kosa.HOME.resolve("data/sandboxes").resolve(id).resolve("suspended")).as("resumed once, then gone")
                .doesNotExist();
    }

    /**
     * Several checkpoints, each after changes to the workspace and the root disk (one of them a package
     * installed with dpkg), then rewinds to them in a random order, later ones from earlier timelines too:
     * each time the counting process, both of its files and every change agree on that checkpoint's instant.
     */
    @Test
    @Tag("long") // about 65 s under TCG, moved out of the default suite (30.5 min with it, goal 30): ./run-tests long
    void rewindsInARandomOrderEachLandOnTheirOwnInstant() throws Exception {
        // before the first: the counter from 1, and no mark or package an earlier test made
        use(SANDBOX.running());
        Kosa.Result clean = sh("rm -f /workspace/mark-* /root/mark-*; rm -rf /root/pkg /root/probe.deb; "
                + "dpkg -P kosa8-probe > /dev/null 2>&1; ! dpkg -s kosa8-probe > /dev/null 2>&1");
        assertThat(clean.exitCode()).as("no mark or package left before the test: %s", clean).isZero();
        countingFromOne();
        assertCounting();
        int n = 4;
        String[] ids = new String[n];
        for (int k = 0; k < n; k++) {
            String change = "touch /workspace/mark-" + k + "; echo " + k + " > /root/mark-" + k;
            if (k == 2) {
                // a real package: built and installed with dpkg, which changes its database on the root disk
                change += "; mkdir -p /root/pkg/DEBIAN /root/pkg/usr/local/bin && printf '%s\\n' "
                        + "'Package: kosa8-probe' 'Version: 1.0' 'Architecture: all' 'Maintainer: kosa8 <t@kosa8.dev>' "
                        + "'Description: a package the checkpoint test installs' > /root/pkg/DEBIAN/control "
                        + "&& printf '#!/bin/sh\\necho probe\\n' > /root/pkg/usr/local/bin/kosa8-probe "
                        + "&& chmod 755 /root/pkg/usr/local/bin/kosa8-probe "
                        + "&& dpkg-deb --build /root/pkg /root/probe.deb > /dev/null && dpkg -i /root/probe.deb > /dev/null";
            }
            Kosa.Result done = sh(change + "; sync");
            assertThat(done.exitCode()).as(done.toString()).isZero();
            ids[k] = Kosa.ok(T, "checkpoint", id, "-m", "mark " + k).stdout().strip();
        }
        // and more changes after the last one, which every rewind must undo
        sh("touch /workspace/mark-" + n + "; echo " + n + " > /root/mark-" + n);

        long seed = System.nanoTime();
        List<Integer> order = new java.util.ArrayList<>(List.of(0, 1, 2, 3));
        java.util.Collections.shuffle(order, new java.util.Random(seed));
        for (int k : order) {
            String what = "rewind to mark " + k + " (order " + order + ", seed " + seed + ")";
            Kosa.ok(T, "rewind", id, ids[k]);
            Thread.sleep(1500);
            String guest = sh("for i in 0 1 2 3 4; do test -e /root/mark-$i && echo disk-$i; "
                    + "test -e /workspace/mark-$i && echo ws-$i; done; "
                    + "dpkg -s kosa8-probe > /dev/null 2>&1 && echo installed; kosa8-probe 2>/dev/null").stdout();
            for (int i = 0; i <= n; i++) {
                boolean there = i <= k;
                assertThat(guest.contains("disk-" + i)).as("%s: /root/mark-%d", what, i).isEqualTo(there);
                assertThat(guest.contains("ws-" + i)).as("%s: /workspace/mark-%d in the guest", what, i)
                        .isEqualTo(there);
                assertThat(Files.exists(folder.resolve("mark-" + i))).as("%s: mark-%d on the host", what, i)
                        .isEqualTo(there);
            }
            assertThat(guest.contains("installed")).as("%s: the package", what).isEqualTo(k >= 2);
            assertThat(guest.contains("probe")).as("%s: the package's program", what).isEqualTo(k >= 2);
            assertConsecutiveFromOne(numbers(Files.readString(folder.resolve("counter.log"))),
                    what + ": the workspace's counter");
            assertConsecutiveFromOne(numbers(sh("cat /root/counter.log").stdout()), what + ": the root disk's counter");
        }
        assertCounting();
    }

    /**
     * The daemon killed while a checkpoint's RAM is being written: the stream's writer is a process of its own
     * and finishes it, so the guest is not left stuck (QEMU 7.2 would leave it so if the stream were cut); the
     * next daemon re-attaches, the cut-short checkpoint is marked failed, never usable, and its parts are swept
     * once the machine is re-attached.
     * The next daemon also has the folder mounted afresh, so what waited on the dead one ends and the sandbox
     * goes on with its folder, checkpoints and pauses to disk without a restart.
     */
    @Test
    @Tag("long") // the default suite took 36.9 min on 2026-12-05 (goal 30): ~48 s, a crash case CrashWalkIT walks too
    void aDaemonKilledWhileRamIsWrittenLeavesTheGuestRunningAndLosesNothingCommitted() throws Exception {
        // a committed checkpoint of the counter running from 1, to rewind to at the end
        use(SANDBOX.running());
        countingFromOne();
        String first = Kosa.ok(T, "checkpoint", id, "-m", "before the daemon is killed").stdout().strip();
        // the new daemon must find a machine that a rewind moved to the runtime directory's alt/
        if (!machineInAlt()) {
            Kosa.ok(T, "rewind", id, first);
        }
        assertThat(machineInAlt()).as("the machine's sockets are in alt/").isTrue();
        awaitStandby();
        List<String> before = checkpointIds();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(" pid (\\d+) ")
                .matcher(Kosa.ok(T, "daemon", "status").stdout());
        assertThat(m.find()).isTrue();
        long daemon = Long.parseLong(m.group(1));
        Path dir = Kosa.HOME.resolve("data/sandboxes").resolve(id).resolve("checkpoints");
        var checkpoint = java.util.concurrent.CompletableFuture.supplyAsync(() -> Kosa.run(T, "checkpoint", id,
                "--wait"));
        long until = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (!streamHas(dir, 64 << 20)) { // well into the stream: the guest already runs on
            assertThat(System.nanoTime()).as("the checkpoint's machine state began to be written").isLessThan(until);
            assertThat(checkpoint).as("the checkpoint is still under way").isNotDone();
            Thread.sleep(5);
        }
        new ProcessBuilder("kill", "-9", Long.toString(daemon)).start().waitFor();
        assertThat(checkpoint.get().exitCode()).as(checkpoint.get().toString()).isNotZero();

        // a new daemon starts and re-attaches, and the guest runs new processes: a QEMU stuck on a cut stream
        // would answer nothing
        Files.writeString(folder.resolve("from-host"), "written on the host while the daemon was away");
        Kosa.Result alive = Kosa.ok(T, "exec", "-w", "/root", id, "--", "sh", "-c",
                "i=0; while [ $i -lt 5 ]; do i=$((i+1)); sleep 0.2; done; echo ran $i");
        assertThat(alive.stdout()).contains("ran 5");
        assertThat(qemus()).as("the new daemon stopped the standby QEMU the killed one left").containsExactly(
                recordedQemu());
        // the cut-short checkpoint was recorded pending at its instant: the next daemon marked it failed, and it
        // can never be used
        List<String> after = checkpointIds();
        assertThat(after).as("every committed checkpoint is still there, the cut-short one beside them")
                .containsAll(before).hasSize(before.size() + 1);
        String cut = after.stream().filter(c -> !before.contains(c)).findFirst().orElseThrow();
        assertThat(Kosa.ok(T, "checkpoints", id).stdout()).containsPattern(cut + ".*failed: .*cut short");
        Kosa.Result refused = Kosa.run(T, "rewind", id, cut);
        assertThat(refused.exitCode()).as(refused.toString()).isNotZero();
        assertThat(refused.stderr()).contains(cut).contains("cut short");
        // swept when the new daemon re-attached, before any next checkpoint: no part of it is left meanwhile
        try (var files = Files.list(dir)) {
            assertThat(files.map(f -> f.getFileName().toString()).filter(n -> n.startsWith(cut)).toList())
                    .as("the cut-short checkpoint's files once the machine is re-attached").containsExactly(cut + ".json");
        }
        assertThat(dir.resolve("workspace/manifests").resolve(cut + ".json")).as("its workspace snapshot").doesNotExist();
        // the new daemon had the folder mounted afresh: the counting process, which waited on a write the dead
        // daemon never answered, got an error for it and counts on, and the folder is live both ways again
        assertCounting();
        Kosa.Result inWorkspace = sh("echo fresh > /workspace/after-restart && cat /workspace/from-host");
        assertThat(inWorkspace.exitCode()).as(inWorkspace.toString()).isZero();
        assertThat(inWorkspace.stdout()).isEqualTo("written on the host while the daemon was away");
        assertThat(folder.resolve("after-restart")).hasContent("fresh");
        String next = Kosa.ok(T, "checkpoint", id, "--wait", "-m", "after the daemon's death").stdout().strip();
        List<String> all = checkpointIds();
        assertThat(all).containsAll(before).contains(next, cut).hasSize(before.size() + 2);
        try (var files = Files.list(dir)) {
            assertThat(files.map(f -> f.getFileName().toString()).filter(n -> n.contains(".vmstate") || n.contains(".ram"))
                    .sorted().toList()).as("the cut-short checkpoint's parts were swept; the others are kept as pages")
                    .isEqualTo(all.stream().filter(c -> !c.equals(cut)).map(c -> c + ".ram").sorted().toList());
        }
        // nothing half-made survives: the folder snapshot and the held layer's copy it had are swept as well
        for (String layer : List.of("workspace", "held")) {
            try (var files = Files.list(dir.resolve(layer).resolve("manifests"))) {
                assertThat(files.map(f -> f.getFileName().toString()).toList()).as(layer)
                        .doesNotContain(cut + ".json").contains(next + ".json");
            }
        }
        Process snapshots = new ProcessBuilder("qemu-img", "snapshot", "-l", "-U", Kosa.HOME.resolve("data/sandboxes")
                .resolve(id).resolve("root.qcow2").toString()).redirectErrorStream(true).start();
        assertThat(new String(snapshots.getInputStream().readAllBytes())).as("the root disk's snapshots")
                .contains(next).doesNotContain(cut);
        // with its folder mounted afresh, the sandbox pauses to disk as any other, and resumes with it
        Kosa.ok(Duration.ofMinutes(5), "stop", id);
        assertThat(Kosa.HOME.resolve("data/sandboxes").resolve(id).resolve("suspended")).isDirectory();
        Kosa.ok(Duration.ofMinutes(10), "start", id);
        Kosa.Result resumed = sh("echo again >> /workspace/after-restart && cat /workspace/after-restart");
        assertThat(resumed.stdout()).as(resumed.toString()).isEqualTo("fresh\nagain\n");
        assertCounting();

        Kosa.ok(T, "rewind", id, first);
        Thread.sleep(2000);
        assertConsecutiveFromOne(numbers(Files.readString(folder.resolve("counter.log"))), "the workspace's counter");
        assertConsecutiveFromOne(numbers(sh("cat /root/counter.log").stdout()), "the root disk's counter");
        assertCounting();
    }

    /**
     * A machine paused to disk that cannot be resumed (here its saved state is cut in half) is discarded, and
     * the sandbox boots afresh from its disk with all a boot brings: its folder, and its broker, which answers a
     * denied request with 403 (a half-done resume once closed the broker, and the boot went on without it).
     */
    @Tag("long") // the default suite took 35.7 min on a clean clone on 2026-12-05 (goal 30): ./run-tests long
    @Test
    void aPausedMachineThatCannotBeResumedBootsAfreshWithItsFolderAndItsBroker() throws Exception {
        // a counting process, which a fresh boot does not have
        use(SANDBOX.running());
        countingFromOne();
        Kosa.ok(Duration.ofMinutes(5), "stop", id);
        Path suspended = Kosa.HOME.resolve("data/sandboxes").resolve(id).resolve("suspended");
        Path state = suspended.resolve("machine.vmstate");
        assertThat(state).exists();
        try (var ch = java.nio.channels.FileChannel.open(state, java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(ch.size() / 2);
        }
        Kosa.ok(Duration.ofMinutes(10), "start", id);
        assertThat(suspended).as("the broken state is discarded").doesNotExist();
        int before = numbers(sh("cat /root/counter.log").stdout()).size();
        Thread.sleep(2500);
        assertThat(numbers(sh("cat /root/counter.log").stdout())).as("a fresh boot: no counting process")
                .hasSize(before);
        Kosa.Result ws = sh("echo booted > /workspace/after-fallback");
        assertThat(ws.exitCode()).as(ws.toString()).isZero();
        assertThat(folder.resolve("after-fallback")).hasContent("booted");
        Kosa.Result denied = Kosa.run(T, "exec", id, "--", "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                "http://not-allowed.example/");
        assertThat(denied.stdout()).as(denied.toString()).isEqualTo("403");
    }

    @Test
    void removingTheSandboxStopsItsMachineAndItsStandby() throws Exception {
        use(SANDBOX.running());
        Kosa.ok(T, "checkpoint", id, "-m", "before the end");
        awaitStandby();
        assertThat(qemus()).hasSize(2);
        Kosa.ok(Duration.ofMinutes(1), "rm", "-f", id);
        SANDBOX.removed();
        assertThat(qemus()).as("no QEMU of the sandbox is left").isEmpty();
        assertThat(Kosa.HOME.resolve("run").resolve(id)).as("nor its runtime files").doesNotExist();
    }

    /** The pids of the QEMU processes of this test's sandbox: its machine and its standby, if any. */
    List<Long> qemus() {
        return ProcessHandle.allProcesses().filter(ProcessHandle::isAlive)
                .filter(h -> h.info().command().orElse("").contains("qemu-system")
                        && java.util.Arrays.asList(h.info().arguments().orElse(new String[0]))
                        .contains("kosa8-" + id + ",process=kosa8-" + id))
                .map(ProcessHandle::pid).sorted().toList();
    }

    boolean machineInAlt() throws java.io.IOException {
        String cmdline = Files.readString(Path.of("/proc", Long.toString(recordedQemu()), "cmdline"));
        return cmdline.contains("/run/" + id + "/alt/qmp.sock,");
    }

    /**
     * The QEMU process running the sandbox's machine. In its jail the record names the jail's first
     * process (docs/files.md; {@code JailIT} checks it), QEMU its child: that child, as {@link #qemus}
     * finds the QEMUs; unjailed, the recorded process itself.
     */
    long recordedQemu() throws java.io.IOException {
        long recorded = com.fasterxml.jackson.databind.json.JsonMapper.builder().build()
                .readTree(Kosa.ok(T, "inspect", id).stdout()).path("qemuPid").asLong();
        List<Long> jailed = ProcessHandle.of(recorded).stream().flatMap(ProcessHandle::descendants)
                .filter(h -> h.info().command().orElse("").contains("qemu-system")).map(ProcessHandle::pid).toList();
        assertThat(jailed).as("at most one QEMU under the recorded process %d", recorded).hasSizeLessThan(2);
        return jailed.isEmpty() ? recorded : jailed.getFirst();
    }

    /** Waits for the sandbox's standby QEMU, started in the background after a checkpoint or a rewind. */
    long awaitStandby() throws Exception {
        long machine = recordedQemu();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            List<Long> others = qemus().stream().filter(p -> p != machine).toList();
            if (others.size() == 1) {
                return others.getFirst();
            }
            assertThat(others).as("at most one standby").hasSizeLessThan(2);
            Thread.sleep(100);
        }
        throw new AssertionError("no standby QEMU started for the sandbox (its QEMUs: " + qemus() + ")");
    }

    static boolean streamHas(Path dir, long bytes) throws java.io.IOException {
        if (!Files.isDirectory(dir)) {
            return false;
        }
        try (var files = Files.list(dir)) {
            return files.anyMatch(f -> f.getFileName().toString().endsWith(".vmstate.tmp") && f.toFile().length() > bytes);
        }
    }
}
