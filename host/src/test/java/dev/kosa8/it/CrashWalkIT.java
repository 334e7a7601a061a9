package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The crash walk (docs/checkpoints.md, "Crash walk"): the daemon, or the
 * sandbox's QEMU, is killed with SIGKILL at each named step of checkpoint,
 * rewind, fork, stop, start and secret set, through the host's test-only hook
 * ({@code KOSA8_TEST_CRASH}, {@code host.CrashPoints}). After each kill and a
 * daemon restart: {@code kosa8 ls} answers and names every sandbox in a
 * settled state, no QEMU runs that no sandbox owns, no temporary file is
 * left, the interrupted operation is complete or absent, and every committed
 * checkpoint rewinds to its instant (a guest process counts in RAM and writes
 * each number to a workspace file and a root-disk file: the root disk's must
 * run from 1 with no gap, as in {@link CheckpointIT}, and the workspace's
 * must hold each of them except the writes the guest was told failed).
 *
 * <p>The steps are not named here: one run of each operation with the hook
 * recording gives them, so a step added to the code is walked too. By default
 * a representative subset is walked (for each operation one step, the
 * daemon and QEMU taking turns); {@code -Dkosa8.crashwalk=full} walks every
 * step with both processes (about 40 kills, 30-40 minutes under TCG), and
 * {@code -Dkosa8.crashwalk=stop/commit:daemon} (comma-separated) walks only the kills named.
 */
@Tag("long") // 10 minutes for the subset under TCG, 30-40 for every step: ./run-tests long
class CrashWalkIT {
    static final Duration T = Duration.ofMinutes(3);
    static final String WALK = System.getProperty("kosa8.crashwalk", "");
    static final boolean FULL = WALK.equals("full");
    static final String SECRET = "CRASH_WALK_TOKEN";

    @RegisterExtension
    static final ReplaceableSandbox SANDBOX = new ReplaceableSandbox("CrashWalkIT", "--memory", "256M");

    static String id;
    static Path folder;
    static final Path STEPS = Kosa.HOME.resolveSibling("crash-walk-steps");
    static final JsonMapper JSON = JsonMapper.builder().build();
    /** The points at which the sandbox's QEMU runs: the only ones a QEMU kill is planned at. */
    static final Set<String> WITH_QEMU = new java.util.HashSet<>();

    /** One kill: the point, whom it kills, and the operation it interrupts. */
    record Kill(String operation, String step, String target) {
        String point() {
            return operation + "/" + step;
        }

        @Override
        public String toString() {
            return point() + ":" + target;
        }
    }

    @TestFactory
    Stream<DynamicTest> everyStepOfEveryOperationSurvivesAKillOfTheDaemonOrQemu() throws Exception {
        SharedSandbox.Booted box = SANDBOX.running();
        id = box.id();
        folder = box.workspace();
        startCounting();
        String first = Kosa.ok(T, "checkpoint", id, "-m", "before the walk").stdout().strip();
        Map<String, List<String>> steps = discover(first);
        List<Kill> kills = plan(steps);
        System.out.println("crash walk (" + (FULL ? "full" : "subset") + "): steps " + steps + "; kills " + kills);
        assertThat(steps.keySet()).as("every operation reached its named steps")
                .contains("checkpoint", "rewind", "stop", "start", "fork", "secret-set");
        return kills.stream().map(k -> DynamicTest.dynamicTest(k.toString(), () -> walk(k, first)));
    }

    /** Each operation once with the hook recording: the steps it passes, in order. */
    Map<String, List<String>> discover(String first) throws Exception {
        Files.deleteIfExists(STEPS);
        Map<String, String> env = Map.of("KOSA8_TEST_CRASH", "record=" + STEPS);
        restartDaemon();
        run(env, "checkpoint", id, "--wait", "-m", "discovery").stdout(); // its commit's steps too
        run(env, "rewind", id, first);
        run(env, "stop", id);
        run(env, "start", id);
        String fork = run(env, "fork", id, first, "--workspace", forkFolder().toString()).stdout().strip();
        Kosa.ok(T, "rm", "-f", fork);
        Kosa.deleteTree(forkFolder());
        Kosa.runWith(env, T, "token-from-discovery".getBytes(StandardCharsets.US_ASCII), "secret", "set", SECRET,
                "--host", "api.crash.test");
        restartDaemon(); // the hook off again
        Kosa.ok(T, "secret", "rm", SECRET); // its walk then sees it set or absent
        Map<String, List<String>> steps = new LinkedHashMap<>();
        for (String line : Files.readAllLines(STEPS)) {
            String[] p = line.split(" ")[0].split("/", 2);
            if (line.endsWith(" +qemu")) {
                WITH_QEMU.add(line.split(" ")[0]);
            }
            List<String> of = steps.computeIfAbsent(p[0], k -> new ArrayList<>());
            if (!of.contains(p[1])) {
                of.add(p[1]);
            }
        }
        steps.remove("create"); // a create is the template's walk, and only a fresh shape makes one
        rewindEachCommitted(); // the discovery's own checkpoint, and the counter running again
        return steps;
    }

    static List<Kill> plan(Map<String, List<String>> steps) {
        List<Kill> kills = new ArrayList<>();
        if (WALK.contains("/")) { // named kills, OPERATION/STEP:daemon|qemu, comma-separated: one case walked again
            for (String k : WALK.split(",")) {
                String[] point = k.strip().split("[/:]");
                assertThat(steps.getOrDefault(point[0], List.of())).as("a step of the walk: %s", k).contains(point[1]);
                kills.add(new Kill(point[0], point[1], point[2]));
            }
            return kills;
        }
        int turn = 0;
        for (var e : steps.entrySet()) {
            List<String> names = e.getValue();
            if (FULL) {
                for (String s : names) {
                    kills.add(new Kill(e.getKey(), s, "daemon"));
                    if (WITH_QEMU.contains(e.getKey() + "/" + s)) {
                        kills.add(new Kill(e.getKey(), s, "qemu"));
                    }
                }
            } else {
                // the middle step; on QEMU's turn, the middle one of those where QEMU runs (none: the daemon)
                List<String> withQemu = names.stream().filter(s -> WITH_QEMU.contains(e.getKey() + "/" + s)).toList();
                if (turn++ % 2 == 1 && !withQemu.isEmpty()) {
                    kills.add(new Kill(e.getKey(), withQemu.get(withQemu.size() / 2), "qemu"));
                } else {
                    kills.add(new Kill(e.getKey(), names.get(names.size() / 2), "daemon"));
                }
            }
        }
        return kills;
    }

    void walk(Kill k, String first) throws Exception {
        ensureRunning();
        List<String> before = checkpointIds();
        Set<String> sandboxesBefore = Set.copyOf(sandboxes().keySet());
        Kosa.run(T, "secret", "rm", SECRET);
        restartDaemon();
        Files.deleteIfExists(STEPS);
        Map<String, String> env = Map.of("KOSA8_TEST_CRASH", "record=" + STEPS + ";kill=" + k);
        if (k.operation().equals("start")) {
            Kosa.ok(Duration.ofMinutes(5), "stop", id);
            restartDaemon();
        }
        Kosa.Result r = switch (k.operation()) {
            // --wait: the command in flight spans the commit's steps, which run after the instant returns
            case "checkpoint" -> Kosa.runWith(env, T, null, "checkpoint", id, "--wait", "-m", "walk " + k);
            case "rewind" -> Kosa.runWith(env, T, null, "rewind", id, first);
            case "stop" -> Kosa.runWith(env, T, null, "stop", id);
            case "start" -> Kosa.runWith(env, Duration.ofMinutes(10), null, "start", id);
            case "fork" -> Kosa.runWith(env, Duration.ofMinutes(10), null, "fork", id, first, "--workspace",
                    forkFolder().toString());
            case "secret-set" -> Kosa.runWith(env, T, "token-of-the-walk".getBytes(StandardCharsets.US_ASCII),
                    "secret", "set", SECRET, "--host", "api.crash.test");
            default -> throw new AssertionError("the walk does not know how to run " + k.operation());
        };
        if (k.target().equals("daemon")) {
            restarts++;
        }
        List<String> said = Files.exists(STEPS) ? Files.readAllLines(STEPS) : List.of();
        assertThat(said).as("the point was reached and its kill done: %s", r).contains("killed " + k.point() + " "
                + k.target());
        if (k.operation().equals("secret-set")) {
            // the CLI sets secrets itself: it is the process killed
            assertThat(r.exitCode()).as("%s: killed by SIGKILL: %s", k, r).isEqualTo(128 + 9);
        } else if (k.target().equals("daemon")) {
            // the command in flight failed, with an error naming the daemon, rather than hanging (Kosa.run's
            // timeout) or claiming success
            assertThat(r.exitCode()).as("%s: %s", k, r).isNotZero();
            assertThat(r.stderr()).as("%s: a clear error", k).contains("kosa8d");
        }
        restartDaemon();

        // kosa8 ls answers, and every sandbox in it has settled
        Map<String, String> now = awaitSettled(k);
        assertThat(now).as("%s: the walk's sandbox is still there", k).containsKey(id);
        List<String> forks = now.keySet().stream().filter(s -> !sandboxesBefore.contains(s)).toList();
        if (k.operation().equals("fork")) {
            assertThat(forks).as("%s: the fork is complete or absent", k).hasSizeLessThanOrEqualTo(1);
            forks.forEach(f -> assertThat(now.get(f)).as("%s: the fork %s is there, so complete", k, f)
                    .isEqualTo("running"));
        } else {
            assertThat(forks).as("%s: no sandbox appeared", k).isEmpty();
        }
        assertNoOrphanQemu(k, now);
        if (k.operation().equals("secret-set")) {
            Kosa.Result ls = Kosa.ok(T, "secret", "ls");
            assertThat(ls.stdout().contains(SECRET) ? ls.stdout() : "absent").as("%s: the secret is set or absent", k)
                    .satisfiesAnyOf(s -> assertThat(s).isEqualTo("absent"), s -> assertThat(s).contains("api.crash.test"));
            assertNoTemporaryFiles(k, Kosa.HOME.resolve("config"));
        }

        ensureRunning();
        assertNoTemporaryFiles(k, Kosa.HOME.resolve("data/sandboxes").resolve(id));
        // the folder is served again (docs/workspace.md, "A daemon restart"), before any rewind mounts it anew: a
        // daemon killed while QEMU was stopped, the counter writing, once left it unmounted for good
        Files.writeString(folder.resolve("walk-marker"), k.toString());
        assertThat(sh("cat /workspace/walk-marker").stdout()).as("%s: the guest reads the folder again", k)
                .isEqualTo(k.toString());
        for (String fork : forks) {
            Kosa.ok(T, "rm", "-f", fork);
        }
        if (Files.exists(forkFolder())) {
            Kosa.deleteTree(forkFolder());
        }
        List<String> after = checkpointIds();
        assertThat(after).as("%s: every committed checkpoint is still there", k).containsAll(before);
        assertThat(after.size() - before.size()).as("%s: the interrupted checkpoint is complete or absent: %s", k,
                after).isBetween(0, k.operation().equals("checkpoint") ? 1 : 0);
        // one whose commit was cut short is listed failed, never pending or usable, its parts swept (above)
        Map<String, String> states = checkpointStates();
        after.stream().filter(c -> !before.contains(c)).forEach(c -> assertThat(states.get(c))
                .as("%s: the interrupted checkpoint %s is committed or failed", k, c).isIn("committed", "failed"));
        rewindEachCommitted();
        // the walk's own checkpoints, checked, go: every kill starts from the same two
        for (String c : checkpointIds()) {
            if (!c.equals(first) && !before.contains(c)) {
                Kosa.ok(T, "checkpoint", "rm", id, c);
            }
        }
    }

    /**
     * Rewinds to each committed checkpoint, newest last: the counter, both of its files agree at each. The root
     * disk's runs from 1 with no gap. The workspace's holds each of those numbers unless the guest was told its
     * write failed: a daemon restart fails the requests the old mount still waited on with EIO
     * (docs/workspace.md, "A daemon restart"), and the counter notes each such number on the root disk. So a
     * write the guest saw succeed is never missing, and none appears that it never made.
     */
    void rewindEachCommitted() throws Exception {
        Map<String, String> states = checkpointStates();
        for (String c : checkpointIds()) {
            if (!states.get(c).equals("committed")) {
                continue; // a checkpoint whose commit a kill cut short is failed: never used (SPECIFICATION 6.29)
            }
            Kosa.ok(T, "rewind", id, c);
            Thread.sleep(1500);
            String what = "after a rewind to " + c;
            // the counter runs on meanwhile: the root disk's file is read first, so that every number in it had
            // had its workspace write (or its failure noted) before the other two are read
            String[] guest = sh("cat /root/counter.log; echo ---; cat /root/counter.failed 2>/dev/null; true")
                    .stdout().split("---\n", -1);
            List<Integer> disk = CheckpointIT.numbers(guest[0]);
            List<Integer> failed = CheckpointIT.numbers(guest.length > 1 ? guest[1] : "");
            List<Integer> folderCount = CheckpointIT.numbers(Files.readString(folder.resolve("counter.log")));
            CheckpointIT.assertConsecutiveFromOne(disk, what + ", the root disk's counter");
            assertThat(disk).as("the counter runs at " + c).isNotEmpty();
            assertCounterAgrees(folderCount, disk, failed, what);
            assertThat(failed.size()).as("%s: writes failed by daemon restarts %s, at most one per restart (%d)",
                    what, failed, restarts).isLessThanOrEqualTo(restarts);
        }
    }

    /**
     * The counter writes {@code i} to the workspace (or, failing, to the failure list), then to the root disk; read
     * in that order (the disk's first), each number on the root disk is in exactly one of the other two, which may
     * have gone on further.
     */
    static void assertCounterAgrees(List<Integer> folderCount, List<Integer> disk, List<Integer> failed, String what) {
        int last = disk.isEmpty() ? 0 : disk.getLast();
        for (int i = 1; i <= last; i++) {
            assertThat(folderCount.contains(i) ^ failed.contains(i))
                    .as("%s: %d is in the workspace's counter %s or among the failed writes %s, not both, not neither",
                            what, i, folderCount, failed).isTrue();
        }
        for (int i = 1; i < folderCount.size(); i++) {
            assertThat(folderCount.get(i)).as("%s: the workspace's counter %s rises", what, folderCount)
                    .isGreaterThan(folderCount.get(i - 1));
        }
        assertThat(failed).as("%s: failed writes", what).allMatch(n -> n >= 1);
        assertThat(folderCount).as("%s: the workspace's counter", what).allMatch(n -> n >= 1);
    }

    /** The sandbox running: a sandbox left stopped or failed by a kill is started (a fresh boot, if it must). */
    void ensureRunning() throws Exception {
        String state = sandboxes().get(id);
        if (!"running".equals(state)) {
            Kosa.ok(Duration.ofMinutes(10), "start", id);
        }
    }

    /** {@code kosa8 ls}: each sandbox's state, once none is starting or being removed. */
    Map<String, String> awaitSettled(Kill k) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        Map<String, String> now = sandboxes();
        while (now.values().stream().anyMatch(s -> !Set.of("running", "stopped", "failed").contains(s))) {
            assertThat(System.nanoTime()).as("%s: every sandbox settles: %s", k, now).isLessThan(deadline);
            Thread.sleep(500);
            now = sandboxes();
        }
        return now;
    }

    static Map<String, String> sandboxes() {
        Map<String, String> all = new LinkedHashMap<>();
        Kosa.Result ls = Kosa.ok(T, "ls");
        ls.stdout().lines().skip(1).map(l -> l.trim().split("\\s+")).filter(f -> f.length > 1)
                .forEach(f -> all.put(f[0], f[1]));
        return all;
    }

    /**
     * Every QEMU of the tests' kosa8 home belongs to a sandbox {@code ls} lists as running, and is its machine or
     * its one standby; none runs for a sandbox that is not running. Given a few seconds: a standby is stopped in
     * the background.
     */
    void assertNoOrphanQemu(Kill k, Map<String, String> states) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            List<String> orphans = new ArrayList<>();
            Map<String, Integer> perSandbox = new LinkedHashMap<>();
            ProcessHandle.allProcesses().filter(ProcessHandle::isAlive)
                    .filter(h -> h.info().command().orElse("").contains("qemu-system")).forEach(h -> {
                        String args = String.join(" ", h.info().arguments().orElse(new String[0]));
                        java.util.regex.Matcher m = java.util.regex.Pattern.compile("process=kosa8-([0-9a-z]+)")
                                .matcher(args);
                        if (m.find() && args.contains(Kosa.HOME.toString())) {
                            String box = m.group(1);
                            perSandbox.merge(box, 1, Integer::sum);
                            if (!"running".equals(states.get(box))) {
                                orphans.add(h.pid() + " of " + box + " (" + states.getOrDefault(box, "not listed") + ")");
                            }
                        }
                    });
            perSandbox.forEach((box, n) -> {
                if (n > 2) {
                    orphans.add(n + " QEMUs of " + box + " (a machine and a standby at most)");
                }
            });
            if (orphans.isEmpty()) {
                return;
            }
            assertThat(System.nanoTime()).as("%s: QEMUs no sandbox owns: %s", k, orphans).isLessThan(deadline);
            Thread.sleep(500);
        }
    }

    /** No file of an unfinished write (a temporary name, an in-progress mark, a half-made template) under {@code dir}. */
    static void assertNoTemporaryFiles(Kill k, Path dir) throws Exception {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            List<String> left = walk.map(p -> dir.relativize(p).toString())
                    .filter(n -> n.endsWith(".tmp") || n.contains(".tmp.") || n.endsWith("in-progress")
                            || n.contains(".making-"))
                    .toList();
            assertThat(left).as("%s: temporary files left in %s", k, dir).isEmpty();
        }
    }

    static List<String> checkpointIds() {
        return Kosa.ok(T, "checkpoints", id).stdout().lines().skip(1).map(l -> l.split("\\s+")[0]).toList();
    }

    /**
     * Each checkpoint's state as `kosa8 checkpoints --json` gives it: pending, committed (no state given) or
     * failed. Not the table's columns: its size ("12.3 MiB") holds a space, and a split on spaces read "MiB" as
     * every committed checkpoint's state, so the rewinds below checked none.
     */
    static Map<String, String> checkpointStates() throws Exception {
        Map<String, String> states = new LinkedHashMap<>();
        for (var c : JSON.readTree(Kosa.ok(T, "checkpoints", id, "--json").stdout())) {
            String state = c.path("state").asText("");
            states.put(c.path("id").asText(), state.isEmpty() ? "committed" : state);
        }
        assertThat(states.keySet()).as("the JSON lists what the table lists").containsExactlyElementsOf(checkpointIds());
        return states;
    }

    static Kosa.Result sh(String script) {
        return Kosa.run(T, "exec", id, "--", "sh", "-c", script);
    }

    static Kosa.Result run(Map<String, String> env, String... args) {
        Kosa.Result r = Kosa.runWith(env, Duration.ofMinutes(10), null, args);
        assertThat(r.exitCode()).as("kosa8 %s: %s", String.join(" ", args), r).isZero();
        return r;
    }

    static Path forkFolder() {
        return Kosa.HOME.resolveSibling("it-workspaces").resolve("CrashWalkIT-fork");
    }

    /** Daemon stops and kills so far: each may fail one folder write in flight (see {@link #rewindEachCommitted}). */
    static int restarts;

    /** The daemon stopped; the next call starts a new one, with that call's environment. */
    static void restartDaemon() {
        restarts++;
        Kosa.run(T, "daemon", "stop");
    }

    /** The counting process, from 1 in fresh files; waits until it has counted to 3. */
    static void startCounting() throws Exception {
        Kosa.Result start = sh("""
                rm -f /workspace/counter.log /root/counter.log /root/counter.failed
                nohup sh -c 'i=0; while :; do i=$((i+1)); echo $i >> /workspace/counter.log \
                || echo $i >> /root/counter.failed; echo $i >> /root/counter.log; sleep 0.3; done' \
                > /dev/null 2>&1 &
                """);
        assertThat(start.exitCode()).as(start.toString()).isZero();
        long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        while (CheckpointIT.numbers(sh("cat /root/counter.log 2>/dev/null").stdout()).size() < 3) {
            assertThat(System.nanoTime()).as("the counter reaches 3").isLessThan(deadline);
            Thread.sleep(500);
        }
    }
}
