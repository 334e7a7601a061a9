package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a guest can make the host keep is bounded, and the bound says so
 * when it is reached: a sandbox's disk budget (root disk, checkpoints, logs),
 * its number of checkpoints, and its commands and file transfers at once.
 */
@SharedSandbox.CreateArgs({"--max-checkpoints", "2", "--net", "none"})
class BoundsIT {
    static final Duration T = Duration.ofMinutes(10);

    @RegisterExtension
    static final SharedSandbox SANDBOX = new SharedSandbox();

    /** The bytes a sandbox's folder takes on the host's disk (allocated, as {@code du} counts them). */
    static long onDisk(String id) throws Exception {
        Process p = new ProcessBuilder("du", "-s", "--block-size=1", Kosa.HOME.resolve("data/sandboxes").resolve(id)
                .toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).strip();
        assertThat(p.waitFor()).as(out).isZero();
        return Long.parseLong(out.split("\\s+")[0]);
    }

    /**
     * A guest writing and checkpointing in a loop hits its budget: a
     * checkpoint is refused with what to do, and the host never keeps more
     * than the budget. The budget is 6.5 GiB, about 475 MiB above what the
     * guest's 4 GiB disk written anew, its 1 GiB of RAM twice and its logs
     * need, so 128 MiB writes reach it within two rounds. The guest then
     * runs out of disk quickly: its file system's free space is reserved with
     * {@code fallocate} (no data written), and the next write gets ENOSPC.
     * The full-size case, which writes the whole disk, is
     * {@link #aGuestWritingItsWholeDiskBetweenCheckpointsNeverTakesTheHostPastItsBudget}.
     */
    @Test
    void aGuestFillingItsDiskAndCheckpointingInALoopHitsItsBudgetAndNeverPassesIt() throws Exception {
        fillsAndCheckpoints(6656, 128, 8, "free=$(( $(stat -f -c %f /) * $(stat -f -c %S /) ));"
                + " fallocate -l $(( free - 67108864 )) /root/the-rest-reserved && "
                + "yes kosa8-fills-its-disk | head -c 512M > /root/the-rest; echo status $?; sync", 1L << 28);
    }

    /**
     * The same with real bytes to the end: the guest writes its whole disk
     * between checkpoints (the case the budget keeps room for), and the
     * host's copy of it still stays within the budget.
     */
    @Test
    @Tag("long") // writes about 4 GiB in the guest: 6-25 minutes under TCG; ./run-tests long
    void aGuestWritingItsWholeDiskBetweenCheckpointsNeverTakesTheHostPastItsBudget() throws Exception {
        // 6.5 GiB: its 4 GiB disk written anew, 1 GiB of RAM twice, logs, and a little
        fillsAndCheckpoints(6656, 300, 6, "yes kosa8-fills-its-disk | head -c 6G > /root/the-rest; echo status $?;"
                + " sync", 3L << 30);
    }

    /**
     * Makes a sandbox with a budget of {@code budgetMiB}; writes {@code
     * writeMiB} and checkpoints, at most {@code rounds} times, until a
     * checkpoint is refused; then runs {@code fillTheRest} in the guest,
     * which must end in ENOSPC; the sandbox's folder is never larger than
     * the budget, and then holds more than {@code leastKept}.
     */
    private static void fillsAndCheckpoints(long budgetMiB, int writeMiB, int rounds, String fillTheRest,
                                            long leastKept) throws Exception {
        long budget = budgetMiB << 20;
        String gib = String.format(java.util.Locale.ROOT, "%.2f GiB", budget / (double) (1L << 30));
        String id = Kosa.ok(T, "create", "--net", "none", "--disk-budget", budgetMiB + "M").stdout().strip();
        try {
            List<String> taken = new ArrayList<>();
            Kosa.Result refused = null;
            for (int i = 0; i < rounds && refused == null; i++) {
                Kosa.ok(T, "exec", id, "--", "sh", "-c", "yes kosa8-fills-its-disk | head -c " + writeMiB
                        + "M > /root/fill" + i + " && sync");
                assertThat(onDisk(id)).as("after writing %d", i).isLessThanOrEqualTo(budget);
                Kosa.Result r = Kosa.run(T, "checkpoint", id, "-m", "fill " + i);
                if (r.exitCode() == 0) {
                    taken.add(r.stdout().strip());
                } else {
                    refused = r;
                }
                assertThat(onDisk(id)).as("after checkpoint %d", i).isLessThanOrEqualTo(budget);
            }
            assertThat(taken).as("checkpoints taken before the budget was reached").isNotEmpty();
            assertThat(refused).as("a checkpoint is refused at the budget").isNotNull();
            assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(8);
            assertThat(refused.stderr()).contains("would pass its disk budget of " + gib)
                    .contains("kosa8 checkpoint rm " + id);

            // the guest fills the rest of its disk: it gets ENOSPC, and the host keeps no more than the budget
            Kosa.Result fill = Kosa.run(Duration.ofMinutes(30), "exec", id, "--", "sh", "-c", fillTheRest);
            assertThat(fill.stderr() + fill.stdout()).as(fill.toString()).contains("No space left on device");
            assertThat(onDisk(id)).as("the sandbox's folder with its disk full").isLessThanOrEqualTo(budget);
            Kosa.Result again = Kosa.run(T, "checkpoint", id, "-m", "full");
            assertThat(again.exitCode()).as(again.toString()).isEqualTo(8);

            String df = Kosa.ok(Duration.ofMinutes(1), "df").stdout();
            System.out.printf("BoundsIT: %d checkpoint(s) taken before the budget; the sandbox's folder %d bytes"
                    + " with its disk full (budget %d); refused: %s%nkosa8 df:%n%s%n", taken.size(), onDisk(id), budget,
                    refused.stderr().strip(), df);
            assertThat(df).contains(id).contains(String.format(java.util.Locale.ROOT, "%.1f GiB",
                    budget / (double) (1L << 30))).contains("reclaimable:");
            String inspect = Kosa.ok(Duration.ofMinutes(1), "inspect", id).stdout();
            assertThat(inspect).contains("\"storage\"").contains("\"diskBytes\" : " + budget);
            long total = Long.parseLong(inspect.replaceAll("(?s).*\"total\" : (\\d+).*", "$1"));
            assertThat(total).isLessThanOrEqualTo(budget).isGreaterThan(leastKept);

            // removing a checkpoint makes room again: that is what the error tells the user to do
            for (String c : taken) {
                Kosa.ok(T, "checkpoint", "rm", id, c);
            }
            Kosa.ok(T, "exec", id, "--", "sh", "-c", "rm -f /root/fill* /root/the-rest*; fstrim / || true; sync");
        } finally {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
        }
    }

    @Test
    void aBudgetTooSmallForTheDiskItselfIsRefusedAtCreate() {
        List<String> before = Kosa.ok(Duration.ofMinutes(1), "ls", "-q").stdout().lines().toList();
        Kosa.Result r = Kosa.run(T, "create", "--net", "none", "--disk-budget", "1G");
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
        assertThat(r.stderr()).contains("a disk budget of 1.00 GiB cannot hold")
                .contains("its 4.00 GiB disk written in full, a pause to disk of its 1024 MiB of RAM")
                .contains("--disk-budget 6G or more");
        assertThat(Kosa.ok(Duration.ofMinutes(1), "ls", "-q").stdout().lines().toList()).as("no sandbox was made")
                .isEqualTo(before);
    }

    @Test
    void aCheckpointPastTheMostASandboxKeepsIsRefusedNamingTheOneToRemove(SharedSandbox.Booted box) {
        List<String> before = Kosa.ok(T, "checkpoints", box.id()).stdout().lines().skip(1)
                .map(l -> l.split("\\s+")[0]).toList();
        for (String c : before) {
            Kosa.ok(T, "checkpoint", "rm", box.id(), c);
        }
        String first = Kosa.ok(T, "checkpoint", box.id(), "-m", "one").stdout().strip();
        Kosa.ok(T, "checkpoint", box.id(), "-m", "two");
        Kosa.Result third = Kosa.run(T, "checkpoint", box.id(), "-m", "three");
        assertThat(third.exitCode()).as(third.toString()).isEqualTo(8);
        assertThat(third.stderr()).contains("has 2 checkpoints, the most it keeps (--max-checkpoints 2)")
                .contains("kosa8 checkpoint rm " + box.id() + " " + first);
        assertThat(Kosa.ok(T, "checkpoints", box.id()).stdout().lines().skip(1).toList()).hasSize(2);
        Kosa.ok(T, "checkpoint", "rm", box.id(), first);
        Kosa.ok(T, "checkpoint", box.id(), "-m", "three");
    }

    @Test
    void commandsPastTheMostASandboxRunsAtOnceAreRefusedAndTheOthersRunOn(SharedSandbox.Booted box) throws Exception {
        Path settings = Kosa.HOME.resolve("config/settings.json");
        Files.createDirectories(settings.getParent());
        Files.writeString(settings, "{\"streams\": 2}\n");
        List<Process> running = new ArrayList<>();
        try {
            Kosa.ok(Duration.ofMinutes(1), "daemon", "stop"); // the next command starts one that reads the settings
            for (int i = 0; i < 2; i++) {
                running.add(Kosa.builder("exec", box.id(), "--", "sh", "-c", "echo started; sleep 60").start());
            }
            for (Process p : running) {
                assertThat(new String(p.getInputStream().readNBytes(8))).isEqualTo("started\n");
            }
            Kosa.Result third = Kosa.run(T, "exec", box.id(), "--", "true");
            assertThat(third.exitCode()).as(third.toString()).isEqualTo(8);
            assertThat(third.stderr()).contains("has 2 commands and file transfers under way")
                    .contains("\"streams\"");
            Kosa.Result cp = Kosa.run(T, "cp", box.id() + ":/etc/hostname", Kosa.CWD.resolve("hostname").toString());
            assertThat(cp.exitCode()).as("a file transfer counts too: " + cp).isEqualTo(8);
            running.getFirst().destroyForcibly().waitFor();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            Kosa.Result after;
            do {
                after = Kosa.run(T, "exec", box.id(), "--", "echo", "room again");
            } while (after.exitCode() == 8 && System.nanoTime() < deadline);
            assertThat(after.stdout()).as(after.toString()).isEqualTo("room again\n");
        } finally {
            running.forEach(Process::destroyForcibly);
            Files.deleteIfExists(settings);
            Kosa.run(Duration.ofMinutes(1), "daemon", "stop");
        }
    }
}
