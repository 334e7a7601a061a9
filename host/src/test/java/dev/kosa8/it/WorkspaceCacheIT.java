package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The folder cached in the guest (the default transport), kept true to the host:
 * each change made on the host is seen by the guest's next command, without waiting, and what a
 * guest command wrote is on the host when the command returns. One sandbox for the class; each test
 * works in a sub-folder of its own and primes the guest's cache (reads, stats, listings) before the
 * host changes anything, so what the guest then sees comes through the notices, not a cold cache.
 */
@ExtendWith(SharedSandbox.class)
@SharedSandbox.CreateArgs({"--memory", "256M"})
class WorkspaceCacheIT {
    private static final Duration T = Duration.ofMinutes(3);

    private static Kosa.Result sh(SharedSandbox.Booted box, String script) {
        Kosa.Result r = box.exec(T, "sh", "-euc", script);
        assertThat(r.exitCode()).as(r.toString()).isZero();
        return r;
    }

    private static Path dir(SharedSandbox.Booted box, String name) throws Exception {
        return Files.createDirectories(box.workspace().resolve(name));
    }

    @Test
    void theMountCachesAndTheModuleAppliesTheHostsNotices(SharedSandbox.Booted box) {
        Kosa.Result r = sh(box, "grep ' /workspace ' /proc/mounts; cat /sys/module/kosa8_ws9p/parameters/notices");
        assertThat(r.stdout()).contains(" 9p ").contains("loose").contains("trans=kosa8");
        assertThat(r.stdout().lines().skip(1).findFirst().map(Long::parseLong).orElseThrow())
                .as("the daemon's notices (at least its first: everything)").isPositive();
        assertThat(Kosa.ok(T, "inspect", box.id()).stdout()).as("inspect says how the cache is kept true")
                .containsPattern("\"workspaceCache\" : \"cached, kept true by watching \\d+ directories\"");
    }

    @Test
    void aHostEditIsSeenByTheGuestsNextReadAndStat(SharedSandbox.Booted box) throws Exception {
        Path d = dir(box, "edit");
        Files.writeString(d.resolve("f"), "one\n");
        assertThat(sh(box, "cd edit && cat f && stat -c %s f && cat f").stdout()).isEqualTo("one\n4\none\n");
        Files.writeString(d.resolve("f"), "two, longer\n"); // and at once, no wait:
        assertThat(sh(box, "cd edit && cat f && stat -c %s f").stdout()).isEqualTo("two, longer\n12\n");
        Files.writeString(d.resolve("f"), "3\n");
        assertThat(sh(box, "cd edit && cat f && stat -c %s f").stdout()).as("shorter").isEqualTo("3\n2\n");
        assertThat(sh(box, "cat /sys/module/kosa8_ws9p/parameters/stale_names").stdout().strip())
                .as("names the module dropped").isNotEqualTo("0");
    }

    @Test
    void hostRemoveMoveMakeChmodAndADirectoryReplacedByAFile(SharedSandbox.Booted box) throws Exception {
        Path d = dir(box, "names");
        Files.writeString(d.resolve("gone"), "x");
        Files.writeString(d.resolve("moved"), "m");
        Files.writeString(d.resolve("mode"), "p");
        Files.createDirectories(d.resolve("was-dir/inner"));
        Files.writeString(d.resolve("was-dir/inner/f"), "deep");
        sh(box, "cd names && ls -lR . > /dev/null && ls -lR . > /dev/null && cat gone moved mode was-dir/inner/f"
                + " > /dev/null");

        Files.delete(d.resolve("gone"));
        Files.move(d.resolve("moved"), d.resolve("there"));
        Files.createDirectory(d.resolve("made"));
        Files.writeString(d.resolve("made/new"), "n");
        Files.setPosixFilePermissions(d.resolve("mode"), PosixFilePermissions.fromString("rw-------"));
        Kosa.deleteTree(d.resolve("was-dir"));
        Files.writeString(d.resolve("was-dir"), "a file now\n");

        assertListing(box, "names", "made\nmode\nthere\nwas-dir\n");
        Kosa.Result r = sh(box, "cd names && for f in gone moved there mode made made/new was-dir; do"
                + " if [ -e $f ]; then stat -c '%n %F %a %s' $f; else echo \"$f absent\"; fi; done; cat was-dir");
        assertThat(r.stdout()).isEqualTo(String.join("\n",
                "gone absent", "moved absent", "there regular file 644 1", "mode regular file 600 1",
                "made directory 755 4096".replace(" 4096", " " + size(d.resolve("made"))),
                "made/new regular file 644 1", "was-dir regular file 644 11", "a file now", ""));
    }

    /** The guest's listing of a folder's sub-folder, twice (the second from what the guest keeps). */
    private static void assertListing(SharedSandbox.Booted box, String dir, String expected) {
        assertThat(sh(box, "cd " + dir + " && LC_ALL=C ls && LC_ALL=C ls").stdout()).isEqualTo(expected + expected);
    }

    @Test
    void directoryListingsAreKeptAndFollowEveryChangeOnEitherSide(SharedSandbox.Booted box) throws Exception {
        Path d = dir(box, "listings");
        Files.writeString(d.resolve("a"), "a");
        long before = Long.parseLong(sh(box, "cat /sys/module/kosa8_ws9p/parameters/listing_hits").stdout().strip());
        assertListing(box, "listings", "a\n");
        long after = Long.parseLong(sh(box, "cat /sys/module/kosa8_ws9p/parameters/listing_hits").stdout().strip());
        assertThat(after).as("listings answered in the guest").isGreaterThan(before);
        Files.writeString(d.resolve("b"), "b");
        assertListing(box, "listings", "a\nb\n");
        sh(box, "cd listings && touch c && mkdir e && ls > /dev/null && mv c d && rm a");
        assertListing(box, "listings", "b\nd\ne\n");
        Files.delete(d.resolve("b"));
        Files.move(d.resolve("d"), d.resolve("e/d"));
        assertListing(box, "listings", "e\n");
        assertListing(box, "listings/e", "d\n");
    }

    /**
     * A read-only open of a file or directory is answered in the guest (a quiet open); a host change
     * between two of them is still seen, and a file the host removed cannot be opened: the next command's
     * sync has dropped its name first.
     */
    @Test
    void readOnlyOpensAreAnsweredInTheGuestAndFollowTheHost(SharedSandbox.Booted box) throws Exception {
        Path d = dir(box, "opens");
        Files.writeString(d.resolve("f"), "first\n");
        String opens = "cat /sys/module/kosa8_ws9p/parameters/quiet_opens";
        long before = Long.parseLong(sh(box, opens).stdout().strip());
        assertThat(sh(box, "cd opens && cat f f f && ls").stdout()).isEqualTo("first\nfirst\nfirst\nf\n");
        long after = Long.parseLong(sh(box, opens).stdout().strip());
        assertThat(after - before).as("opens answered in the guest: the file's three, the directory's").isGreaterThanOrEqualTo(4);
        Files.writeString(d.resolve("f"), "second, longer\n");
        assertThat(sh(box, "cd opens && cat f").stdout()).isEqualTo("second, longer\n");
        Files.delete(d.resolve("f"));
        Kosa.Result gone = box.exec(T, "sh", "-c", "cd opens && cat f");
        assertThat(gone.exitCode()).isNotZero();
        assertThat(gone.stderr()).contains("No such file");
    }

    private static long size(Path p) throws Exception {
        return Files.size(p);
    }

    @Test
    void anEditorSaveOnTheHostOfAFileTheGuestHasOpenAndMapped(SharedSandbox.Booted box) throws Exception {
        Path d = dir(box, "save");
        Files.writeString(d.resolve("doc"), "old text");
        // the guest maps the file, says so, waits for the host's save, then reads the mapping and the name
        CompletableFuture<Kosa.Result> guest = CompletableFuture.supplyAsync(() -> box.exec(T, "python3", "-c",
                String.join("\n",
                        "import mmap, os, time",
                        "os.chdir('save')",
                        "f = open('doc', 'rb')",
                        "m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)",
                        "print(m[:].decode(), flush=True)",
                        "open('ready', 'w').close()",
                        "end = time.time() + 60",
                        "while not os.path.exists('go') and time.time() < end: time.sleep(0.01)",
                        "print(m[:].decode())",
                        // a process that runs on sees a change within the notices' bound, not at once: it may
                        // look before the notice of a change made before the one it waited for is applied
                        "start = time.time()",
                        "while open('doc').read() == 'old text' and time.time() < start + 2: time.sleep(0.005)",
                        "print(open('doc').read())")));
        awaitHost(d.resolve("ready"));
        Files.writeString(d.resolve("doc.tmp"), "the new text, saved");
        Files.move(d.resolve("doc.tmp"), d.resolve("doc"), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
        Files.writeString(d.resolve("go"), "");
        Kosa.Result r = guest.get();
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.stdout()).as("the mapping keeps the file it mapped; the name gives the saved one")
                .isEqualTo("old text\nold text\nthe new text, saved\n");
    }

    private static void awaitHost(Path p) throws InterruptedException {
        long end = System.nanoTime() + T.toNanos();
        while (!Files.exists(p) && System.nanoTime() < end) {
            Thread.sleep(20);
        }
        assertThat(p).as("the guest's mark, seen on the host").exists();
    }

    @Test
    void gitCheckoutOnTheHostWhileTheGuestRunsGitStatusInALoop(SharedSandbox.Booted box) throws Exception {
        Path repo = dir(box, "checkout");
        git(repo, "init", "-q", "-b", "main");
        for (int i = 0; i < 40; i++) {
            Files.writeString(repo.resolve("f" + i + ".txt"), "main " + i + "\n");
        }
        git(repo, "add", ".");
        git(repo, "commit", "-qm", "on main");
        git(repo, "checkout", "-q", "-b", "topic");
        for (int i = 0; i < 40; i += 3) {
            Files.writeString(repo.resolve("f" + i + ".txt"), "topic " + i + "\n");
        }
        Files.delete(repo.resolve("f1.txt"));
        Files.writeString(repo.resolve("only-on-topic.txt"), "t\n");
        git(repo, "add", "-A");
        git(repo, "commit", "-qm", "on topic");
        git(repo, "checkout", "-q", "main");

        CompletableFuture<Kosa.Result> loop = CompletableFuture.supplyAsync(() -> box.exec(T, "sh", "-c",
                "cd checkout && git config --global --add safe.directory '*' && touch looping"
                        // as an editor's does: no index refresh written back, so no index.lock to race the host's git
                        + " && while [ ! -e stop ]; do git --no-optional-locks status --porcelain > /dev/null; done"));
        awaitHost(repo.resolve("looping"));
        for (String branch : List.of("topic", "main", "topic")) {
            git(repo, "checkout", "-q", branch);
            Thread.sleep(300);
        }
        Files.writeString(repo.resolve("stop"), "");
        Kosa.Result looped = loop.get();
        assertThat(looped.exitCode()).as(looped.toString()).isZero();
        Files.delete(repo.resolve("stop"));
        Files.delete(repo.resolve("looping"));

        Kosa.Result r = sh(box, "cd checkout && git status --porcelain && git log -1 --format=%s && cat f0.txt f3.txt"
                + " only-on-topic.txt && ls f1.txt 2>&1 || true");
        assertThat(r.stdout()).isEqualTo("on topic\ntopic 0\ntopic 3\nt\n"
                + "ls: cannot access 'f1.txt': No such file or directory\n");
    }

    private static void git(Path repo, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("git", "-c", "user.email=h@example.com", "-c", "user.name=host"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(repo.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("git " + String.join(" ", args) + ": " + out).isZero();
    }

    /**
     * Each file made, then appended to at once, 200 times: the host's notices of the first writes come in
     * between, and must never cost the guest what it wrote. It caught an inode taken out of the cache being
     * evicted unwritten, and a notice whose attributes the host read before the guest's write reached it,
     * applied after that write went back, giving the guest the notice's size (docs/workspace.md, "The
     * guest's own changes against the host's notices").
     */
    @Test
    void aFileMadeAndAppendedToAtOnceKeepsEveryWriteWhileNoticesComeIn(SharedSandbox.Booted box) throws Exception {
        Path d = dir(box, "appends");
        Kosa.Result made = sh(box, "cd appends && for i in $(seq 1 200); do echo \"line $i\" > f$i; echo more >> f$i;"
                + " done && for i in $(seq 1 200); do [ \"$(cat f$i)\" = \"$(printf 'line %s\\nmore' $i)\" ]"
                + " || echo \"f$i: $(cat f$i)\"; done");
        assertThat(made.stdout()).as("files the guest reads back otherwise than it wrote them").isEmpty();
        for (int i = 1; i <= 200; i++) {
            assertThat(d.resolve("f" + i)).content().isEqualTo("line " + i + "\nmore\n");
        }
    }

    @Test
    void whatTheGuestWritesIsOnTheHostWhenTheCommandReturnsOrSoonAfter(SharedSandbox.Booted box) throws Exception {
        Path d = dir(box, "writes");
        sh(box, "cd writes && for i in $(seq 1 200); do echo \"line $i\" > f$i; done && echo more >> f7"
                + " && python3 -c \"open('big', 'wb').write(b'x' * 3000000)\"");
        for (int i = 1; i <= 200; i++) {
            assertThat(d.resolve("f" + i)).content().isEqualTo("line " + i + (i == 7 ? "\nmore\n" : "\n"));
        }
        assertThat(Files.size(d.resolve("big"))).isEqualTo(3_000_000);
        // a process that goes on after it writes: its write reaches the host by the cache's periodic write-back
        sh(box, "cd writes && (sh -c 'echo later > bg; sleep 20' > /dev/null 2>&1 &)");
        long end = System.nanoTime() + 5_000_000_000L;
        while (!(Files.exists(d.resolve("bg")) && Files.readString(d.resolve("bg")).equals("later\n"))
                && System.nanoTime() < end) {
            Thread.sleep(10);
        }
        assertThat(d.resolve("bg")).content().isEqualTo("later\n");
    }

    @Test
    void aRewindGivesTheGuestTheFolderOfItsInstant(SharedSandbox.Booted box) throws Exception {
        Path d = dir(box, "rewind");
        sh(box, "cd rewind && echo v1 > f && cat f");
        String cp = Kosa.ok(T, "checkpoint", box.id()).stdout().strip();
        sh(box, "cd rewind && echo v2 > f && cat f > /dev/null");
        Files.writeString(d.resolve("g"), "made on the host after the checkpoint");
        sh(box, "cd rewind && cat g > /dev/null");
        Kosa.ok(T, "rewind", box.id(), cp);
        assertThat(d.resolve("f")).content().isEqualTo("v1\n");
        assertThat(d.resolve("g")).doesNotExist();
        assertThat(sh(box, "cd rewind && cat f && ls").stdout()).isEqualTo("v1\nf\n");
        // and the cache goes on being kept true after the rewind
        Files.writeString(d.resolve("f"), "host after rewind\n");
        assertThat(sh(box, "cat rewind/f").stdout()).isEqualTo("host after rewind\n");
    }

    /**
     * Random host and guest changes to a small tree, interleaved: after each, the guest's view of
     * the tree (names, types, sizes, modes and contents) is the host's. Seeded, so a failure repeats.
     */
    @Test
    void randomInterleavingsOfHostAndGuestChangesLeaveTheGuestSeeingTheHostsTree(SharedSandbox.Booted box)
            throws Exception {
        Path d = dir(box, "random");
        long seed = Long.getLong("kosa8.it.seed", 41L);
        Random rnd = new Random(seed);
        String[] names = {"a", "b", "c", "s/a", "s/b", "s/t/a"};
        for (int step = 0; step < 24; step++) {
            String name = names[rnd.nextInt(names.length)];
            String text = "step " + step + " " + "x".repeat(rnd.nextInt(40)) + "\n";
            boolean onHost = rnd.nextBoolean();
            int op = rnd.nextInt(5);
            String what = (onHost ? "host " : "guest ") + op + " " + name;
            if (onHost) {
                Path p = d.resolve(name);
                Files.createDirectories(p.getParent());
                switch (op) {
                    case 0, 1 -> Files.writeString(p, text);
                    case 2 -> Files.deleteIfExists(p);
                    case 3 -> {
                        if (Files.isRegularFile(p)) {
                            Files.move(p, d.resolve(names[rnd.nextInt(3)]), StandardCopyOption.REPLACE_EXISTING);
                        }
                    }
                    default -> {
                        if (Files.isRegularFile(p)) {
                            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(
                                    rnd.nextBoolean() ? "rw-------" : "rwxr-xr-x"));
                        }
                    }
                }
            } else {
                String script = switch (op) {
                    case 0, 1 -> "mkdir -p $(dirname " + name + ") && printf '%s' '" + text + "' > " + name;
                    case 2 -> "rm -f " + name;
                    case 3 -> "[ ! -f " + name + " ] || mv -f " + name + " " + names[rnd.nextInt(3)];
                    default -> "[ ! -f " + name + " ] || chmod " + (rnd.nextBoolean() ? "600" : "755") + " " + name;
                };
                sh(box, "cd random && " + script);
            }
            assertThat(guestView(box)).as("after step " + step + " (" + what + "), seed " + seed)
                    .isEqualTo(hostView(d));
        }
    }

    private static String guestView(SharedSandbox.Booted box) {
        return sh(box, "cd random && find . -mindepth 1 | LC_ALL=C sort | while read -r p; do"
                + " if [ -f \"$p\" ]; then echo \"$p $(stat -c '%a %s' \"$p\") $(md5sum < \"$p\" | cut -c1-32)\";"
                + " else echo \"$p dir\"; fi; done").stdout();
    }

    private static String hostView(Path d) throws Exception {
        TreeMap<String, String> lines = new TreeMap<>();
        try (Stream<Path> all = Files.walk(d)) {
            for (Path p : (Iterable<Path>) all::iterator) {
                if (p.equals(d)) {
                    continue;
                }
                String rel = "./" + d.relativize(p);
                if (Files.isRegularFile(p)) {
                    String mode = Integer.toOctalString(modeBits(p));
                    lines.put(rel, rel + " " + mode + " " + Files.size(p) + " " + md5(Files.readAllBytes(p)));
                } else {
                    lines.put(rel, rel + " dir");
                }
            }
        }
        StringBuilder b = new StringBuilder();
        lines.values().forEach(l -> b.append(l).append('\n'));
        return b.toString();
    }

    private static int modeBits(Path p) throws Exception {
        return (Integer) Files.getAttribute(p, "unix:mode") & 0777;
    }

    private static String md5(byte[] data) throws Exception {
        return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("MD5").digest(data));
    }
}
