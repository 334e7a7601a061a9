package dev.kosa8.processes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Processes the daemon owns, against a guest that records what it is sent and answers as the test says. */
class ProcessesTest {
    /** A guest whose channels the test drives. */
    static final class FakeGuest implements Guest {
        final List<Message> sent = new CopyOnWriteArrayList<>();
        final Map<Integer, Consumer<Message>> listeners = new ConcurrentHashMap<>();
        int next = 1;

        @Override
        public synchronized int open(Consumer<Message> listener) {
            listeners.put(next, listener);
            return next++;
        }

        @Override
        public void send(Message m) {
            sent.add(m);
            if (m instanceof Message.Exec e) {
                // as the agent answers: started, or not found
                reply(e.spec().argv().getFirst().equals("no-such-program")
                        ? new Message.Failed(e.channel(), Message.ErrorCode.NOT_FOUND, "no-such-program: command not found")
                        : new Message.Started(e.channel(), 100 + e.channel()));
            }
        }

        void reply(Message m) {
            listeners.get(m.channel()).accept(m);
        }

        List<Message> sentOn(int channel) {
            return sent.stream().filter(m -> m.channel() == channel).toList();
        }
    }

    private final FakeGuest guest = new FakeGuest();
    private Processes processes = new Processes(new ProcessLimits(2, 1024, 2));

    @AfterEach
    void close() {
        processes.close();
    }

    private ProcessInfo start(String... argv) {
        return processes.start("s1", guest, new Processes.Start(Message.ExecSpec.of(argv), "t", Duration.ZERO,
                false));
    }

    @Test
    void aProcessStartsOnAChannelOfItsOwnWithItsStdinClosedUnlessKept() {
        ProcessInfo p = start("echo", "hi");
        assertThat(p.id()).isEqualTo("p1");
        assertThat(p.state()).isEqualTo(ProcessState.RUNNING);
        assertThat(p.command()).containsExactly("echo", "hi");
        assertThat(p.pid()).as("the start answers once the guest says it runs").isEqualTo(101);
        assertThat(guest.sentOn(1)).containsExactly(new Message.Exec(1, Message.ExecSpec.of("echo", "hi")),
                new Message.Eof(1, Message.Stream.STDIN));
        ProcessInfo kept = processes.start("s1", guest, new Processes.Start(Message.ExecSpec.of("cat"), "",
                Duration.ZERO, true));
        assertThat(guest.sentOn(2)).containsExactly(new Message.Exec(2, Message.ExecSpec.of("cat")));
        assertThat(kept.stdinOpen()).isTrue();
    }

    @Test
    void aProgramNotFoundIsAFailedProcessWithTheShellsExitCode() {
        ProcessInfo p = start("no-such-program");
        assertThat(p.state()).isEqualTo(ProcessState.FAILED);
        assertThat(p.exitCode()).isEqualTo(127);
        assertThat(p.reason()).isEqualTo("no-such-program: command not found");
    }

    @Test
    void outputIsCreditedBackAtOnceAndKeptWithinTheBoundWhileNoOneReads() {
        start("yes");
        for (int i = 0; i < 40; i++) {
            guest.reply(new Message.Data(1, Message.Stream.STDOUT, new byte[1000]));
        }
        assertThat(guest.sentOn(1).stream().filter(m -> m instanceof Message.Credit).count()).isEqualTo(40);
        OutputBuffer.Stats s = processes.get("s1", "p1").output();
        assertThat(s.buffered()).isEqualTo(1024);
        assertThat(s.end()).isEqualTo(40_000);
        assertThat(s.dropped()).isEqualTo(40_000 - 1024);
        OutputBuffer.Slice read = processes.read("s1", "p1", 0, 1 << 20, Duration.ZERO);
        assertThat(read.dropped()).isEqualTo(40_000 - 1024);
    }

    @Test
    void anExitIsRecordedWithItsCodeAndTheOutputEnds() {
        start("sh");
        guest.reply(new Message.Data(1, Message.Stream.STDERR, "oops\n".getBytes()));
        guest.reply(new Message.Exited(1, 3, 0));
        ProcessInfo p = processes.get("s1", "p1");
        assertThat(p.state()).isEqualTo(ProcessState.EXITED);
        assertThat(p.exitCode()).isEqualTo(3);
        assertThat(p.pid()).isEqualTo(101);
        assertThat(p.ended()).isNotNull();
        OutputBuffer.Slice s = processes.read("s1", "p1", 0, 100, Duration.ofSeconds(5));
        assertThat(s.complete()).isTrue();
        assertThat(s.chunks()).singleElement().satisfies(c -> assertThat(c.stream()).isEqualTo(Message.Stream.STDERR));
    }

    @Test
    void processesPastTheMostASandboxRunsAreRefusedWithALimitErrorAndTheNextFitsOnceOneEnds() {
        start("a");
        start("b");
        assertThatThrownBy(() -> start("c")).isInstanceOfSatisfying(KosaException.class, e -> {
            assertThat(e.kind()).isEqualTo(KosaException.Kind.LIMIT);
            assertThat(e.getMessage()).isEqualTo("sandbox s1 has 2 processes running, the most it may have at once");
            assertThat(e.suggestion()).contains("kosa8 kill s1 PROC").contains("\"processes\"");
        });
        assertThat(processes.list("s1")).hasSize(2);
        guest.reply(new Message.Exited(1, 0, 0));
        assertThat(start("c").id()).isEqualTo("p3");
        assertThat(processes.start("s2", guest, new Processes.Start(Message.ExecSpec.of("d"), "", Duration.ZERO,
                false)).id()).as("another sandbox has its own count").isEqualTo("p1");
    }

    @Test
    void onlyTheNewestFinishedRecordsAreKept() {
        for (int i = 1; i <= 4; i++) {
            start("n" + i);
            guest.reply(new Message.Exited(i, i, 0));
        }
        assertThat(processes.list("s1")).extracting(ProcessInfo::id).containsExactly("p3", "p4");
        assertThatThrownBy(() -> processes.get("s1", "p1")).isInstanceOfSatisfying(KosaException.class, e -> {
            assertThat(e.getMessage()).isEqualTo("sandbox s1 has no process p1");
            assertThat(e.suggestion()).contains("keeps the last 2");
        });
    }

    @Test
    void aProcessLostWithItsMachineEndsFailedWithTheReason() {
        start("sleep", "100");
        guest.reply(new Message.Failed(1, Message.ErrorCode.REWOUND, "the sandbox was rewound to checkpoint c1"));
        ProcessInfo p = processes.get("s1", "p1");
        assertThat(p.state()).isEqualTo(ProcessState.FAILED);
        assertThat(p.reason()).isEqualTo("the sandbox was rewound to checkpoint c1");
        assertThat(p.exitCode()).isNull();
        assertThatThrownBy(() -> processes.signal("s1", "p1", 15)).hasMessageContaining("is not running: it failed: "
                + "the sandbox was rewound");
    }

    @Test
    void aSignalGoesToTheProcessAndItsDeathBySignalSaysSo() {
        start("sleep", "100");
        processes.signal("s1", "p1", SignalNames.parse("term"));
        assertThat(guest.sentOn(1)).contains(new Message.Signal(1, 15));
        guest.reply(new Message.Exited(1, 143, 15));
        ProcessInfo p = processes.get("s1", "p1");
        assertThat(p.exitCode()).isEqualTo(143);
        assertThat(p.signal()).isEqualTo(15);
        assertThat(p.reason()).isEqualTo("ended by SIGTERM, sent through the API");
    }

    @Test
    void aTimeoutKillsTheProcessAndSaysSo() throws Exception {
        processes.start("s1", guest, new Processes.Start(Message.ExecSpec.of("sleep", "100"), "", Duration.ofMillis(50),
                false));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!guest.sentOn(1).contains(new Message.Signal(1, 9)) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(guest.sentOn(1)).contains(new Message.Signal(1, 9));
        guest.reply(new Message.Exited(1, 137, 9));
        assertThat(processes.get("s1", "p1").reason()).isEqualTo("timed out after 0 s");
    }

    @Test
    void stdinIsWrittenWithinTheWindowAndAWriterWaitsForCredit() throws Exception {
        processes.start("s1", guest, new Processes.Start(Message.ExecSpec.of("cat"), "", Duration.ZERO, true));
        processes.write("s1", "p1", new byte[Limits.INITIAL_WINDOW]);
        long sent = guest.sentOn(1).stream().filter(m -> m instanceof Message.Data).mapToLong(m ->
                ((Message.Data) m).bytes().length).sum();
        assertThat(sent).isEqualTo(Limits.INITIAL_WINDOW);
        CompletableFuture<Void> more = CompletableFuture.runAsync(() -> processes.write("s1", "p1", new byte[10]));
        Thread.sleep(200);
        assertThat(more).as("the guest has a window it has not consumed").isNotDone();
        guest.reply(new Message.Credit(1, Message.Stream.STDIN, 10));
        more.get(10, TimeUnit.SECONDS);
        processes.closeStdin("s1", "p1");
        processes.closeStdin("s1", "p1");
        assertThat(guest.sentOn(1).stream().filter(m -> m instanceof Message.Eof).count()).isEqualTo(1);
        assertThatThrownBy(() -> processes.write("s1", "p1", new byte[1]))
                .hasMessage("the stdin of process p1 is closed");
    }

    @Test
    void aTagOfManyLinesAndATerminalAreRefused() {
        assertThatThrownBy(() -> new Processes.Start(Message.ExecSpec.of("x"), "a\nb", Duration.ZERO, false))
                .hasMessageContaining("one line");
        Message.ExecSpec tty = new Message.ExecSpec(List.of("bash"), Map.of(), "", "", true, 24, 80);
        assertThatThrownBy(() -> new Processes.Start(tty, "", Duration.ZERO, false))
                .hasMessageContaining("has no terminal");
        new Processes.Start(tty, "", Duration.ZERO, true); // a terminal typed into: E2B's pty.create
    }

    @Test
    void signalNamesAreReadAsKillReadsThem() {
        assertThat(SignalNames.parse("SIGKILL")).isEqualTo(9);
        assertThat(SignalNames.parse("int")).isEqualTo(2);
        assertThat(SignalNames.parse("15")).isEqualTo(15);
        assertThat(SignalNames.name(10)).isEqualTo("SIGUSR1");
        assertThatThrownBy(() -> SignalNames.parse("NOPE")).hasMessage("'NOPE' is not a signal");
        assertThatThrownBy(() -> SignalNames.parse("65")).hasMessage("'65' is not a signal");
    }
}
