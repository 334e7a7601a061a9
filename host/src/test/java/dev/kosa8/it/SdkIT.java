package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.client.BackgroundProcess;
import dev.kosa8.client.Checkpoint;
import dev.kosa8.client.Command;
import dev.kosa8.client.CommandNotStartedException;
import dev.kosa8.client.ExecResult;
import dev.kosa8.client.FileInfo;
import dev.kosa8.client.FileWatch;
import dev.kosa8.client.InvalidRequestException;
import dev.kosa8.client.Kosa8;
import dev.kosa8.client.ProcessOutput;
import dev.kosa8.client.Sandbox;
import dev.kosa8.client.SandboxInfo;
import dev.kosa8.client.SandboxFileException;
import dev.kosa8.client.SandboxSpec;
import dev.kosa8.client.SandboxStateException;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The Java SDK (module {@code client}) against the real daemon, QEMU and agent: every public method of
 * {@link Kosa8}, {@link Sandbox}, {@link dev.kosa8.client.SandboxFiles}, {@link FileWatch} and
 * {@link BackgroundProcess}, on one
 * sandbox the SDK creates (plus the fork it makes and one kept sandbox). The CLI's own integration tests pass
 * through the same transport ({@code DaemonConnection}, {@code ExecChannel}).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SdkIT {
    static final Duration T = Duration.ofMinutes(3);
    static Kosa8 kosa8;
    static Sandbox box;
    static Path folder;

    @BeforeAll
    static void create() throws Exception {
        // the SDK neither builds the guest image nor starts the daemon: the CLI does both, as docs/sdk.md tells a
        // program to (an image from an older kosa8 would have an agent that speaks an older protocol)
        Kosa.ok(Duration.ofMinutes(15), "image", "ensure");
        kosa8 = Kosa8.connect(Kosa.HOME.resolve("run/kosa8d.sock"));
        folder = Files.createTempDirectory(Kosa.CWD, "sdk-");
        box = kosa8.create(SandboxSpec.builder().workspace(folder).memoryMiB(256).build());
    }

    @AfterAll
    static void removeOnClose() throws Exception {
        if (box != null) {
            String id = box.id();
            box.close();
            box.close(); // again does nothing
            assertThat(kosa8.sandboxes()).extracting(SandboxInfo::id).doesNotContain(id);
        }
        Kosa.deleteTree(folder);
    }

    @Test
    @Order(1)
    void listsAndDescribesWhatItCreated() throws Exception {
        assertThat(kosa8.version()).isNotBlank();
        assertThat(kosa8.sandboxes()).extracting(SandboxInfo::id).contains(box.id());
        SandboxInfo info = box.info();
        assertThat(info.running()).isTrue();
        assertThat(info.memoryMiB()).isEqualTo(256);
        assertThat(Path.of(info.workspace())).isEqualTo(folder.toRealPath());
        // found by a prefix, and closing what was found leaves the sandbox be
        try (Sandbox found = kosa8.sandbox(box.id().substring(0, 6))) {
            assertThat(found.id()).isEqualTo(box.id());
        }
        assertThat(kosa8.sandboxes()).extracting(SandboxInfo::id).contains(box.id());
        assertThatThrownBy(() -> kosa8.sandbox("ffffffffffff")).isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("no sandbox");
    }

    @Test
    @Order(2)
    void execRunsAProgramAndKeepsStreamsAndExitCodeApart() {
        ExecResult r = box.exec("python3", "-c", "print(6*7)");
        assertThat(r.stdout()).isEqualTo("42\n");
        assertThat(r.exitCode()).isZero();
        assertThat(r.succeeded()).isTrue();

        ExecResult failing = box.exec(Command.shell("echo out; echo err >&2; exit 3"));
        assertThat(failing.stdout()).isEqualTo("out\n");
        assertThat(failing.stderr()).isEqualTo("err\n");
        assertThat(failing.exitCode()).isEqualTo(3);

        ExecResult shaped = box.exec(Command.of("sh", "-c", "cat; echo $FOO; pwd; id -un")
                .stdin("in\n".getBytes(StandardCharsets.UTF_8)).env("FOO", "bar").cwd("/tmp").user("root"));
        assertThat(shaped.stdout()).isEqualTo("in\nbar\n/tmp\nroot\n");

        assertThatThrownBy(() -> box.exec("no-such-program")).isInstanceOf(CommandNotStartedException.class)
                .satisfies(e -> assertThat(((CommandNotStartedException) e).exitCode()).isEqualTo(127));
    }

    @Test
    @Order(3)
    void aTimeoutKillsTheCommand() {
        long t0 = System.nanoTime();
        ExecResult r = box.exec(Command.of("sleep", "120").timeout(Duration.ofSeconds(2)));
        assertThat(r.timedOut()).isTrue();
        assertThat(r.exitCode()).isEqualTo(137);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(60));
    }

    @Test
    @Order(4)
    void execStreamsOutputAsItComes() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = box.exec(Command.shell("seq 1 5000; echo done >&2"), out, err);
        assertThat(code).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8).lines()).hasSize(5000).endsWith("5000");
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("done\n");
    }

    @Test
    @Order(5)
    void filesAreWrittenAndReadByteForByte() throws Exception {
        byte[] data = new byte[1 << 20];
        new Random(7).nextBytes(data);
        box.files().write("/root/sdk.bin", data);
        assertThat(box.files().read("/root/sdk.bin")).isEqualTo(data);
        // in the workspace: the host folder's own file
        String inFolder = folder.toRealPath().resolve("from-sdk.txt").toString();
        box.files().write(inFolder, new java.io.ByteArrayInputStream("hi\n".getBytes()), 0755);
        assertThat(Files.readString(Path.of(inFolder))).isEqualTo("hi\n");
        assertThat(box.exec("stat", "-c", "%a", inFolder).stdout().strip()).isEqualTo("755");
        ByteArrayOutputStream streamed = new ByteArrayOutputStream();
        box.files().read(inFolder, streamed);
        assertThat(streamed.toString(StandardCharsets.UTF_8)).isEqualTo("hi\n");

        assertThatThrownBy(() -> box.files().read("/root/no-such-file")).isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("/root/no-such-file");
        assertThatThrownBy(() -> box.files().read("relative/path")).isInstanceOf(InvalidRequestException.class)
                .hasMessageContaining("not an absolute path");
    }

    @Test
    @Order(6)
    void fileOperationsStatListMakeMoveWatchAndRemove() {
        var files = box.files();
        assertThat(files.mkdirs("/root/tree/a/b")).isTrue();
        assertThat(files.mkdirs("/root/tree/a/b")).isFalse();
        files.write("/root/tree/a/b/f.txt", "12345".getBytes(StandardCharsets.UTF_8));
        FileInfo f = files.stat("/root/tree/a/b/f.txt");
        assertThat(f.isFile()).isTrue();
        assertThat(f.size()).isEqualTo(5);
        assertThat(f.owner()).isEqualTo("root");
        assertThat(files.stat("/root/tree").isDirectory()).isTrue();
        assertThat(files.list("/root/tree", 3)).extracting(FileInfo::path)
                .containsExactly("/root/tree/a", "/root/tree/a/b", "/root/tree/a/b/f.txt");
        assertThat(files.list("/root/tree", 1)).extracting(FileInfo::path).containsExactly("/root/tree/a");
        assertThat(files.rename("/root/tree/a/b/f.txt", "/root/tree/g.txt").path()).isEqualTo("/root/tree/g.txt");
        assertThat(files.exists("/root/tree/a/b/f.txt")).isFalse();
        assertThat(files.exists("/root/tree/g.txt")).isTrue();
        assertThatThrownBy(() -> files.stat("/root/tree/nothing")).isInstanceOf(SandboxFileException.class)
                .satisfies(e -> assertThat(((SandboxFileException) e).notFound()).isTrue());
        assertThatThrownBy(() -> files.remove("/root/tree/a", false)).isInstanceOf(SandboxFileException.class)
                .satisfies(e -> assertThat(((SandboxFileException) e).code()).isEqualTo("NOT_EMPTY"));
        try (FileWatch w = files.watch("/root/tree", false)) {
            box.exec("sh", "-c", "echo hi > /root/tree/new.txt");
            java.util.List<FileWatch.Event> seen = new java.util.ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (seen.stream().noneMatch(e -> e.path().equals("/root/tree/new.txt")) && System.nanoTime() < deadline) {
                seen.addAll(w.poll(Duration.ofSeconds(10)).events());
            }
            assertThat(seen).extracting(FileWatch.Event::path).contains("/root/tree/new.txt");
            assertThat(seen).extracting(FileWatch.Event::type).contains("CREATE");
        }
        files.remove("/root/tree", true);
        assertThat(files.exists("/root/tree")).isFalse();
    }

    @Test
    @Order(7)
    void aBackgroundProcessRunsOnAndIsReadFromWhereTheReaderLeftOff() {
        BackgroundProcess p = box.start(Command.shell("for i in $(seq 1 20); do echo $i; sleep 0.05; done")
                .tag("counter"));
        assertThat(p.id()).matches("p[0-9]+");
        assertThat(box.processes()).anySatisfy(i -> {
            assertThat(i.id()).isEqualTo(p.id());
            assertThat(i.tag()).isEqualTo("counter");
        });
        ExecResult r = p.waitFor();
        assertThat(r.stdout().lines()).containsExactly(java.util.stream.IntStream.rangeClosed(1, 20)
                .mapToObj(String::valueOf).toArray(String[]::new));
        assertThat(r.exitCode()).isZero();
        // read again from the middle: the same bytes, once
        ProcessOutput tail = p.read(r.stdoutBytes().length - 3, 1 << 20, Duration.ZERO);
        assertThat(new String(tail.chunks().getFirst().bytes(), StandardCharsets.UTF_8)).isEqualTo("20\n");
        assertThat(tail.complete()).isTrue();
        assertThat(box.process(p.id()).info().exitCode()).isZero();
        p.forget();
        assertThat(box.processes()).extracting(i -> i.id()).doesNotContain(p.id());
    }

    @Test
    @Order(8)
    void aBackgroundProcessTakesStdinAndSignals() {
        BackgroundProcess cat = box.start(Command.of("cat").openStdin());
        cat.write("hello\n".getBytes(StandardCharsets.UTF_8));
        ProcessOutput o = cat.read(0, 1024, Duration.ofSeconds(30));
        assertThat(new String(o.chunks().getFirst().bytes(), StandardCharsets.UTF_8)).isEqualTo("hello\n");
        assertThat(cat.info().stdinOpen()).isTrue();
        cat.closeStdin();
        assertThat(cat.waitFor().exitCode()).isZero();

        BackgroundProcess counted = box.start(Command.of("wc", "-c").stdin("12345".getBytes(StandardCharsets.UTF_8)));
        assertThat(counted.waitFor().stdout().strip()).isEqualTo("5");

        BackgroundProcess sleeper = box.start(Command.of("sleep", "300"));
        assertThat(sleeper.info().running()).isTrue();
        sleeper.kill();
        assertThat(sleeper.waitFor().exitCode()).isEqualTo(137);
        assertThatThrownBy(() -> sleeper.signal("TERM")).isInstanceOf(SandboxStateException.class);

        BackgroundProcess term = box.start(Command.of("sleep", "300"));
        term.signal("TERM");
        ByteArrayOutputStream ignored = new ByteArrayOutputStream();
        assertThat(term.follow(0, ignored, ignored).exitCode()).isEqualTo(143);
    }

    @Test
    @Order(9)
    // the default suite took 30.9 min on 2026-12-05 (goal 30): ~19 s; the pause to disk and resume themselves are
    // CheckpointIT's (the CLI) and E2bIT's (the official E2B SDK); this is the Java SDK's two calls: ./run-tests long
    @Tag("long")
    void stopPausesToDiskAndResumeGoesOn() {
        box.files().write("/root/kept", "kept".getBytes(StandardCharsets.UTF_8));
        box.stop();
        assertThat(box.info().state()).isEqualTo("stopped");
        box.resume();
        assertThat(box.info().running()).isTrue();
        assertThat(box.files().read("/root/kept")).asString(StandardCharsets.UTF_8).isEqualTo("kept");
    }

    @Test
    @Order(10)
    void checkpointForkAndRewind() throws Exception {
        box.files().write("/root/before", "b".getBytes(StandardCharsets.UTF_8));
        Checkpoint cp = box.checkpoint("before");
        assertThat(cp.state()).isEqualTo("committed");
        assertThat(box.checkpoints()).extracting(Checkpoint::id).contains(cp.id());
        box.files().write("/root/after", "a".getBytes(StandardCharsets.UTF_8));

        String forkId;
        Path forkFolder;
        try (Sandbox fork = box.fork(cp)) {
            forkId = fork.id();
            forkFolder = Path.of(fork.info().workspace());
            assertThat(forkFolder).isNotEqualTo(folder.toRealPath());
            assertThat(fork.exec("test", "-e", "/root/after").exitCode()).isEqualTo(1);
            assertThat(fork.files().read("/root/before")).asString(StandardCharsets.UTF_8).isEqualTo("b");
        }
        assertThat(kosa8.sandboxes()).extracting(SandboxInfo::id).doesNotContain(forkId);
        if (forkFolder.startsWith(Kosa.HOME.resolve("data/sandboxes"))) { // a copy-on-write view (ext4: no clones)
            assertThat(forkFolder).as("a view's parts go with its fork").doesNotExist();
        } else {
            Kosa.deleteTree(forkFolder); // the fork's folder copy is the user's, kept after the fork is removed
        }

        box.rewind(cp);
        assertThat(box.exec("test", "-e", "/root/after").exitCode()).isEqualTo(1);
        box.files().write("/root/after", "again".getBytes(StandardCharsets.UTF_8));
        box.rewind(); // the latest checkpoint
        assertThat(box.exec("test", "-e", "/root/after").exitCode()).isEqualTo(1);
    }

    @Test
    @Order(11)
    void aKeptSandboxOutlivesItsHandle() {
        String id;
        try (Sandbox kept = kosa8.create(SandboxSpec.builder().keep(true).build())) {
            id = kept.id();
        }
        assertThat(kosa8.sandboxes()).extracting(SandboxInfo::id).contains(id);
        kosa8.sandbox(id).remove();
        assertThat(kosa8.sandboxes()).extracting(SandboxInfo::id).doesNotContain(id);
    }
}
