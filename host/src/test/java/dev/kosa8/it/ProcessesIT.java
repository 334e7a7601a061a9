package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Processes the daemon owns (docs/processes.md), through the real CLI, daemon, QEMU and agent: output kept while
 * no client is attached and read again from where the client left off, stdin, signals, timeouts, the sandbox's
 * own environment, and each bound hit. The class runs its daemon with small bounds (settings.json, written before
 * its sandbox is made): three processes at once, 64 KiB of output each, four ended ones kept.
 */
class ProcessesIT {
    static final Duration T = Duration.ofMinutes(3);
    static final long OUTPUT_BOUND = 64 * 1024;
    static final Path SETTINGS = Kosa.HOME.resolve("config/settings.json");
    private static final ObjectMapper JSON = new ObjectMapper();

    static {
        // before the shared sandbox below is made: the daemon that makes it reads these bounds
        try {
            Files.createDirectories(SETTINGS.getParent());
            Files.writeString(SETTINGS, "{\"processes\": 3, \"processOutput\": \"64K\", \"processRecords\": 4}\n");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        Kosa.ok(Duration.ofMinutes(1), "daemon", "stop");
    }

    @RegisterExtension
    static final SharedSandbox SANDBOX = new SharedSandbox();

    @AfterAll
    static void defaultBoundsAgain() throws Exception {
        Files.deleteIfExists(SETTINGS);
        Kosa.run(Duration.ofMinutes(1), "daemon", "stop");
    }

    private static String start(SharedSandbox.Booted box, String... commandAndOptions) {
        String[] args = new String[commandAndOptions.length + 1];
        args[0] = "exec";
        System.arraycopy(commandAndOptions, 0, args, 1, commandAndOptions.length);
        String proc = Kosa.ok(T, args).stdout().strip();
        assertThat(proc).matches("p[0-9]+");
        return proc;
    }

    private static JsonNode process(SharedSandbox.Booted box, String proc) throws Exception {
        for (JsonNode p : JSON.readTree(Kosa.ok(T, "procs", "--json", box.id()).stdout())) {
            if (p.path("id").asText().equals(proc)) {
                return p;
            }
        }
        throw new AssertionError("no process " + proc + " in kosa8 procs");
    }

    /** One byte the client printed; its stderr (read only then: reading it waits for its end) if it ended first. */
    private static int readByte(Process client, InputStream in, String before) throws java.io.IOException {
        int b = in.read();
        if (b < 0) {
            throw new AssertionError("attach ended before " + before + ": "
                    + new String(client.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
        }
        return b;
    }

    private static final String FIFTY = "for i in $(seq 1 50); do echo $i; sleep 0.1; done";

    /**
     * The issue's case: a client follows a process's output, goes away half-way, comes back from where it left
     * off, and has every one of the 50 lines once. The loop is the issue's, behind a gate: the process says
     * {@code ready} and waits for a byte on its stdin, sent once the first client has shown that line, so that
     * client is following before the loop prints, however slowly this machine starts a JVM (unguarded, the
     * 5-second loop twice ended before the client's first read).
     */
    @Test
    void aClientThatGoesAwayAndComesBackFromWhereItLeftOffGetsAllFiftyLinesExactlyOnce(SharedSandbox.Booted box)
            throws Exception {
        String proc = start(box, "-d", "-i", "--tag", "fifty", box.id(), "--", "sh", "-c",
                "echo ready; head -c 1 >/dev/null; " + FIFTY);
        try {
            fiftyLinesAcrossAReconnect(box, proc);
        } finally {
            Kosa.run(T, "kill", "-s", "KILL", box.id(), proc); // when it failed half-way: no process left running
        }
    }

    private static void fiftyLinesAcrossAReconnect(SharedSandbox.Booted box, String proc) throws Exception {
        Process first = Kosa.builder("attach", box.id(), proc).start();
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        InputStream in = first.getInputStream();
        while (!got.toString(StandardCharsets.UTF_8).equals("ready\n")) {
            got.write(readByte(first, in, "ready"));
        }
        Kosa.ok(T, "send", "--close", "-n", box.id(), proc, "g");
        while (got.toString(StandardCharsets.UTF_8).lines().count() < 6) {
            got.write(readByte(first, in, "five lines"));
        }
        // SIGTERM: the client goes away; the process runs on (by kill: Process.destroy would also close the pipes
        // this test reads what the client printed from)
        assertThat(new ProcessBuilder("kill", "-TERM", String.valueOf(first.pid())).start().waitFor())
                .as("the first client was still following").isZero();
        java.time.Instant gone = java.time.Instant.now();
        assertThat(first.waitFor(30, TimeUnit.SECONDS)).isTrue();
        got.write(in.readAllBytes()); // what it wrote before it went is the client's too
        String stopped = new String(first.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(stopped).contains("kosa8: detached from " + proc + " at offset").contains("--from");
        assertThat(got.toString(StandardCharsets.UTF_8)).as("the first client left half-way")
                .doesNotContain("\n50\n");

        Kosa.Result rest = Kosa.run(T, "attach", "--from", String.valueOf(got.size()), box.id(), proc);
        assertThat(rest.exitCode()).as(rest.toString()).isZero();
        String all = got.toString(StandardCharsets.UTF_8) + rest.stdout();
        assertThat(all).isEqualTo("ready\n" + IntStream.rangeClosed(1, 50).mapToObj(i -> i + "\n")
                .collect(Collectors.joining()));
        JsonNode p = process(box, proc);
        assertThat(p.path("state").asText()).isEqualTo("exited");
        assertThat(p.path("exitCode").asInt()).isZero();
        assertThat(java.time.Instant.parse(p.path("ended").asText())).as("it ran on after its client went")
                .isAfter(gone);
        assertThat(p.path("tag").asText()).isEqualTo("fifty");
        assertThat(p.path("output").path("dropped").asLong()).isZero();
    }

    @Test
    void stdinReachesABackgroundProcessUntilItIsClosed(SharedSandbox.Booted box) throws Exception {
        String cat = start(box, "-d", "-i", box.id(), "--", "cat");
        Kosa.ok(T, "send", box.id(), cat, "hello");
        Kosa.ok(T, "send", "-n", box.id(), cat, "world");
        assertThat(process(box, cat).path("stdinOpen").asBoolean()).isTrue();
        Kosa.ok(T, "send", "--close", box.id(), cat);
        Kosa.Result out = Kosa.run(T, "attach", box.id(), cat);
        assertThat(out.exitCode()).as("cat ends at the end of its stdin: " + out).isZero();
        assertThat(out.stdout()).isEqualTo("hello\nworld");
        Kosa.Result late = Kosa.run(T, "send", box.id(), cat, "more");
        assertThat(late.exitCode()).isNotZero();
        assertThat(late.stderr()).contains("process " + cat + " takes no more stdin: it exited with 0");

        // more than one request's worth, from the CLI's own stdin
        byte[] input = new byte[700 * 1024 + 3];
        new Random(38).nextBytes(input);
        String sum = start(box, "-d", "-i", box.id(), "--", "sha256sum");
        Kosa.Result sent = Kosa.run(T, input, "send", "--close", box.id(), sum);
        assertThat(sent.exitCode()).as(sent.toString()).isZero();
        Kosa.Result hashed = Kosa.run(T, "attach", box.id(), sum);
        assertThat(hashed.stdout()).as(hashed.toString()).startsWith(HexFormat.of().formatHex(
                MessageDigest.getInstance("SHA-256").digest(input)));
    }

    @Test
    void aSignalEndsAProcessWithThatSignalsStatus(SharedSandbox.Booted box) throws Exception {
        String proc = start(box, "-d", box.id(), "--", "sleep", "600");
        Kosa.ok(T, "kill", box.id(), proc);
        Kosa.Result r = Kosa.run(T, "attach", box.id(), proc);
        assertThat(r.exitCode()).as(r.toString()).isEqualTo(143);
        assertThat(r.stderr()).contains("ended by SIGTERM, sent through the API");
        JsonNode p = process(box, proc);
        assertThat(p.path("signal").asInt()).isEqualTo(15);
        assertThat(Kosa.ok(T, "procs", box.id()).stdout()).containsPattern(proc + " +exited 143 \\(SIGTERM\\)");

        String usr = start(box, "-d", box.id(), "--", "sleep", "600");
        Kosa.ok(T, "kill", "--signal", "SIGUSR1", box.id(), usr);
        assertThat(Kosa.run(T, "attach", box.id(), usr).exitCode()).isEqualTo(128 + 10);
        Kosa.Result gone = Kosa.run(T, "kill", box.id(), usr);
        assertThat(gone.stderr()).contains("process " + usr + " is not running: it exited with 138");
    }

    @Test
    void aTimeoutKillsTheCommandAttachedOrNot(SharedSandbox.Booted box) throws Exception {
        Kosa.Result attached = Kosa.run(T, "exec", "--timeout", "3s", box.id(), "--", "sh", "-c",
                "echo begun; sleep 600");
        assertThat(attached.exitCode()).as(attached.toString()).isEqualTo(137);
        assertThat(attached.stdout()).isEqualTo("begun\n");
        assertThat(attached.stderr()).contains("timed out after 3 s");

        String proc = start(box, "-d", "--timeout", "2", box.id(), "--", "sleep", "600");
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        JsonNode p;
        do {
            Thread.sleep(500);
            p = process(box, proc);
        } while (p.path("state").asText().equals("running") && System.nanoTime() < deadline);
        assertThat(p.path("exitCode").asInt()).as(p.toString()).isEqualTo(137);
        assertThat(p.path("reason").asText()).isEqualTo("timed out after 2 s");
    }

    /**
     * A process printing without end while no one reads: the daemon keeps its last 64 KiB and counts the rest as
     * dropped, however much passes; a reader from the start is told how much it missed.
     */
    @Test
    void aProcessPrintingForeverKeepsNoMoreThanItsBufferAndSaysWhatWasDropped(SharedSandbox.Booted box)
            throws Exception {
        String proc = start(box, "-d", box.id(), "--", "yes", "kosa8-prints-forever");
        try {
            long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
            JsonNode out;
            do {
                Thread.sleep(500);
                out = process(box, proc).path("output");
                assertThat(out.path("buffered").asLong()).as(out.toString()).isLessThanOrEqualTo(OUTPUT_BOUND);
                assertThat(out.path("capacity").asLong()).isEqualTo(OUTPUT_BOUND);
            } while (out.path("end").asLong() < 64 * OUTPUT_BOUND && System.nanoTime() < deadline);
            assertThat(out.path("end").asLong()).as("4 MiB passed through: " + out).isGreaterThanOrEqualTo(
                    64 * OUTPUT_BOUND);
            assertThat(out.path("dropped").asLong()).isEqualTo(out.path("end").asLong()
                    - out.path("buffered").asLong());
            Kosa.Result read = Kosa.run(T, "attach", "--no-follow", box.id(), proc);
            assertThat(read.stderr()).as(read.toString()).containsPattern("kosa8: [0-9]+ bytes of " + proc
                    + "'s output were dropped before they were read \\(it keeps the last 65536 bytes");
            assertThat(read.stdoutBytes().length).isLessThanOrEqualTo((int) (2 * OUTPUT_BOUND));
            assertThat(read.stdout()).contains("kosa8-prints-forever\n");
        } finally {
            Kosa.run(T, "kill", "-s", "KILL", box.id(), proc);
        }
    }

    @Test
    void processesPastTheMostASandboxRunsAreRefusedAndOnlyTheNewestEndedOnesAreKept(SharedSandbox.Booted box)
            throws Exception {
        String[] running = new String[3];
        for (int i = 0; i < 3; i++) {
            running[i] = start(box, "-d", box.id(), "--", "sleep", "600");
        }
        Kosa.Result refused = Kosa.run(T, "exec", "-d", box.id(), "--", "true");
        assertThat(refused.exitCode()).as(refused.toString()).isEqualTo(8);
        assertThat(refused.stderr()).contains("has 3 processes running, the most it may have at once")
                .contains("\"processes\"");
        for (String p : running) {
            Kosa.ok(T, "kill", "-s", "KILL", box.id(), p);
        }
        for (int i = 0; i < 5; i++) {
            assertThat(Kosa.run(T, "exec", "--timeout", "60", box.id(), "--", "true").exitCode()).isZero();
        }
        JsonNode all = JSON.readTree(Kosa.ok(T, "procs", "--json", box.id()).stdout());
        long ended = 0;
        for (JsonNode p : all) {
            ended += p.path("state").asText().equals("running") ? 0 : 1;
        }
        assertThat(ended).as(all.toString()).isEqualTo(4);
        Kosa.Result forgotten = Kosa.run(T, "attach", box.id(), running[0]);
        assertThat(forgotten.stderr()).contains("has no process " + running[0]).contains("keeps the last 4");
    }

    @Test
    void theSandboxsOwnVariablesReachEveryCommandUnderTheCommandsOwn(SharedSandbox.Booted box) throws Exception {
        Kosa.ok(T, "env", box.id(), "KOSA8_GREETING=hello there", "KOSA8_OTHER=1");
        assertThat(Kosa.ok(T, "env", box.id()).stdout()).contains("KOSA8_GREETING=hello there\n");
        assertThat(box.exec("sh", "-c", "echo \"$KOSA8_GREETING\"").stdout()).isEqualTo("hello there\n");
        assertThat(Kosa.ok(T, "exec", "-e", "KOSA8_GREETING=mine", box.id(), "--", "sh", "-c",
                "echo \"$KOSA8_GREETING\"").stdout()).isEqualTo("mine\n");
        String kept = start(box, "-d", box.id(), "--", "sh", "-c", "echo \"$KOSA8_GREETING $KOSA8_OTHER\"");
        assertThat(Kosa.ok(T, "attach", box.id(), kept).stdout()).isEqualTo("hello there 1\n");
        Kosa.ok(T, "env", box.id(), "-u", "KOSA8_GREETING", "-u", "KOSA8_OTHER");
        assertThat(box.exec("sh", "-c", "echo \"[$KOSA8_GREETING]\"").stdout()).isEqualTo("[]\n");
    }

    /** A rewind ends the processes it rewinds away from: their records stay, failed, with the reason. */
    @Test
    void aRewindLeavesTheProcessesItEndedFailedWithTheReason(SharedSandbox.Booted box) throws Exception {
        String checkpoint = Kosa.ok(T, "checkpoint", "--wait", box.id()).stdout().strip();
        String proc = start(box, "-d", box.id(), "--", "sleep", "600");
        Kosa.ok(T, "rewind", box.id(), checkpoint);
        JsonNode p = process(box, proc);
        assertThat(p.path("state").asText()).as(p.toString()).isEqualTo("failed");
        assertThat(p.path("reason").asText()).contains("rewound to checkpoint " + checkpoint);
        Kosa.Result attach = Kosa.run(T, "attach", box.id(), proc);
        assertThat(attach.stderr()).contains("ended without an exit code").contains("rewound");
        assertThat(box.exec("echo", "still serving").stdout()).isEqualTo("still serving\n");
    }
}
