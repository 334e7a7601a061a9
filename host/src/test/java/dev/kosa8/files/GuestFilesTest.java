package dev.kosa8.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.protocol.FileOp;
import dev.kosa8.protocol.FileStat;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.WatchEvent;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The daemon's side of file operations against a scripted guest (the agent's side is tested in the agent module,
 * and both together against a real sandbox in FilesIT): the bounds it keeps whatever the guest sends, path checks
 * before anything is sent, and the protocol's flow control.
 */
class GuestFilesTest {
    /** A guest whose answers a test scripts: {@code answer} gets each request and its channel's listener. */
    static final class ScriptedGuest implements FileGuest {
        final Map<Integer, Consumer<Message>> listeners = new ConcurrentHashMap<>();
        final List<Message> sent = new CopyOnWriteArrayList<>();
        final List<Integer> abandoned = new CopyOnWriteArrayList<>();
        final AtomicInteger channels = new AtomicInteger();
        BiConsumer<Message, Consumer<Message>> answer = (m, l) -> { };

        @Override
        public int open(Consumer<Message> listener) {
            int c = channels.incrementAndGet();
            listeners.put(c, listener);
            return c;
        }

        @Override
        public void send(Message m) {
            sent.add(m);
            Consumer<Message> l = listeners.get(m.channel());
            if (l != null) {
                answer.accept(m, l);
            }
        }

        @Override
        public void abandon(int channel) {
            abandoned.add(channel);
            listeners.remove(channel);
        }
    }

    private static FileStat stat(String path) {
        return new FileStat(path, FileStat.Type.FILE, 1, 0644, 0, 0, "root", "root", 0, "");
    }

    private final ScriptedGuest guest = new ScriptedGuest();
    private final GuestFiles files = new GuestFiles(new FileLimits(5, 2, 3, Duration.ofSeconds(5)));

    @Test
    void pathsAreCheckedBeforeAnythingReachesTheGuest() {
        for (String bad : List.of("", "relative/path", "/a\0b", "/" + "x".repeat(FilePaths.MAX_PATH),
                "/" + "n".repeat(FilePaths.MAX_NAME + 1))) {
            assertThatThrownBy(() -> files.stat(guest, bad, false)).isInstanceOf(FileOpException.class)
                    .satisfies(e -> assertThat(((FileOpException) e).code()).isIn(Message.ErrorCode.INVALID,
                            Message.ErrorCode.TOO_LONG));
        }
        assertThatThrownBy(() -> files.makeDir(guest, "/a", "bad:user", false)).isInstanceOf(FileOpException.class);
        assertThatThrownBy(() -> files.list(guest, "/", 0, 10)).isInstanceOf(FileOpException.class);
        assertThat(guest.sent).isEmpty();
    }

    @Test
    void aFailureCarriesTheGuestsCode() {
        guest.answer = (m, l) -> l.accept(new Message.Failed(m.channel(), Message.ErrorCode.EXISTS, "/a exists"));
        assertThatThrownBy(() -> files.makeDir(guest, "/a", "user", false)).isInstanceOf(FileOpException.class)
                .hasMessage("/a exists").satisfies(e -> assertThat(((FileOpException) e).code())
                        .isEqualTo(Message.ErrorCode.EXISTS));
        Message.FileRequest r = (Message.FileRequest) guest.sent.getFirst();
        assertThat(r.user()).isEqualTo("user");
        assertThat(r.op()).isEqualTo(new FileOp.MakeDir("/a", 0755, false));
    }

    @Test
    void aListingAsksForOneMoreThanItsBoundAndSaysWhenItWasCut() {
        guest.answer = (m, l) -> {
            var op = (FileOp.ListDir) ((Message.FileRequest) m).op();
            List<FileStat> all = new ArrayList<>();
            for (int i = 0; i < Math.min(op.maxEntries(), 4); i++) {
                all.add(stat("/d/" + i));
            }
            l.accept(new Message.FileEntries(m.channel(), all));
            l.accept(new Message.Exited(m.channel(), 0, 0));
        };
        Listing small = files.list(guest, "/d", 1, 10);
        assertThat(small.entries()).hasSize(4);
        assertThat(small.truncated()).isFalse();
        Listing cut = files.list(guest, "/d", 1, 3);
        assertThat(cut.entries()).hasSize(3);
        assertThat(cut.truncated()).isTrue();
        // the daemon's own bound (5) caps what a caller asks for
        files.list(guest, "/d", 2, 1000);
        assertThat(((FileOp.ListDir) ((Message.FileRequest) guest.sent.getLast()).op()).maxEntries()).isEqualTo(6);
    }

    @Test
    void aGuestThatSendsMoreEntriesThanAskedIsCutOff() {
        guest.answer = (m, l) -> {
            for (int i = 0; i < 100; i++) {
                l.accept(new Message.FileEntries(m.channel(), List.of(stat("/d/" + i))));
            }
        };
        assertThatThrownBy(() -> files.list(guest, "/d", 1, 2)).isInstanceOf(FileOpException.class)
                .hasMessageContaining("more entries");
        assertThat(guest.abandoned).hasSize(1);
    }

    @Test
    void aWatchKeepsAtMostItsPendingEventsAndReportsTheRestAsOneOverflow() throws Exception {
        List<Consumer<Message>> watching = new CopyOnWriteArrayList<>();
        guest.answer = (m, l) -> {
            if (m instanceof Message.FileRequest) {
                l.accept(new Message.Started(m.channel(), 0));
                watching.add(l);
            }
        };
        FileWatch w = files.watch("s1", guest, "/w", true);
        int ch = guest.sent.getFirst().channel();
        List<WatchEvent> ten = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            ten.add(new WatchEvent(WatchEvent.Kind.WRITE, "/w/" + i));
        }
        watching.getFirst().accept(new Message.WatchEvents(ch, ten));
        assertThat(w.pending()).isEqualTo(3);
        assertThat(w.lost()).isEqualTo(7);
        WatchBatch b = files.poll("s1", w.id(), 100, Duration.ZERO);
        assertThat(b.events()).extracting(WatchEvent::path).containsExactly("/w/0", "/w/1", "/w/2", "/w");
        assertThat(b.events().getLast().kind()).isEqualTo(WatchEvent.Kind.OVERFLOW);
        assertThat(b.ended()).isFalse();
        // events after the loss come after its report
        watching.getFirst().accept(new Message.WatchEvents(ch, List.of(new WatchEvent(WatchEvent.Kind.CREATE, "/w/n"))));
        assertThat(files.poll("s1", w.id(), 100, Duration.ofSeconds(1)).events())
                .containsExactly(new WatchEvent(WatchEvent.Kind.CREATE, "/w/n"));
        // a long poll returns as soon as an event comes
        Thread.ofVirtual().start(() -> {
            sleep(200);
            watching.getFirst().accept(new Message.WatchEvents(ch, List.of(new WatchEvent(WatchEvent.Kind.CHMOD,
                    "/w/x"))));
        });
        long t0 = System.nanoTime();
        assertThat(files.poll("s1", w.id(), 100, Duration.ofSeconds(30)).events()).hasSize(1);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void aSandboxHasAtMostItsWatchesAndAnEndedDrainedOneIsForgotten() throws Exception {
        guest.answer = (m, l) -> {
            if (m instanceof Message.FileRequest) {
                l.accept(new Message.Started(m.channel(), 0));
            }
        };
        FileWatch a = files.watch("s1", guest, "/a", false);
        files.watch("s1", guest, "/b", false);
        assertThatThrownBy(() -> files.watch("s1", guest, "/c", false)).isInstanceOf(FileOpException.class)
                .satisfies(e -> assertThat(((FileOpException) e).code()).isEqualTo(Message.ErrorCode.LIMIT));
        files.watch("s2", guest, "/c", false); // another sandbox's bound is its own
        guest.listeners.get(1).accept(new Message.Failed(1, Message.ErrorCode.INTERNAL, "lost the connection"));
        WatchBatch b = files.poll("s1", a.id(), 10, Duration.ofSeconds(5));
        assertThat(b.ended()).isTrue();
        assertThat(b.reason()).isEqualTo("lost the connection");
        assertThatThrownBy(() -> files.watch("s1", a.id())).isInstanceOf(FileOpException.class);
        files.watch("s1", guest, "/c", false);
        files.unwatch("s1", files.watches("s1").getFirst().id());
        assertThat(guest.abandoned).isNotEmpty();
        files.forget("s1");
        assertThat(files.watches("s1")).isEmpty();
    }

    @Test
    void aWatchTheGuestRefusesFailsWithItsCodeAndTakesNoPlace() {
        guest.answer = (m, l) -> l.accept(new Message.Failed(m.channel(), Message.ErrorCode.NOT_FOUND, "/nope"));
        for (int i = 0; i < 5; i++) {
            assertThatThrownBy(() -> files.watch("s1", guest, "/nope", false)).isInstanceOf(FileOpException.class)
                    .satisfies(e -> assertThat(((FileOpException) e).code()).isEqualTo(Message.ErrorCode.NOT_FOUND));
        }
        assertThat(files.watches("s1")).isEmpty();
    }

    @Test
    void aWriteSendsNoMoreThanTheGuestCredited() {
        byte[] content = new byte[3 * Limits.INITIAL_WINDOW + 5];
        AtomicInteger received = new AtomicInteger();
        AtomicInteger outstanding = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        guest.answer = (m, l) -> {
            switch (m) {
                case Message.FileRequest r -> {
                    l.accept(new Message.FileEntries(m.channel(), List.of(stat(((FileOp.MakeDir) r.op()).path()))));
                    l.accept(new Message.Exited(m.channel(), 0, 0));
                }
                case Message.Data d -> {
                    received.addAndGet(d.bytes().length);
                    most.accumulateAndGet(outstanding.addAndGet(d.bytes().length), Math::max);
                    // the guest takes it on another thread, as the agent's stdin pump does
                    Thread.ofVirtual().start(() -> {
                        outstanding.addAndGet(-d.bytes().length);
                        l.accept(new Message.Credit(d.channel(), Message.Stream.STDIN, d.bytes().length));
                    });
                }
                case Message.Eof e -> l.accept(new Message.Exited(e.channel(), 0, 0));
                default -> { }
            }
        };
        guest.answer = wrapStat(guest.answer);
        FileStat s = files.write(guest, "/dir/f", new ByteArrayInputStream(content), WriteOptions.DEFAULT);
        assertThat(s.path()).isEqualTo("/dir/f");
        assertThat(received.get()).isEqualTo(content.length);
        assertThat(most.get()).isLessThanOrEqualTo(Limits.INITIAL_WINDOW);
        assertThat(guest.sent).anyMatch(m -> m instanceof Message.PutFile p && p.path().equals("/dir/f")
                && p.mode() == 0644);
    }

    /** Answers stat requests (what a write ends with) before the rest of a script. */
    private static BiConsumer<Message, Consumer<Message>> wrapStat(BiConsumer<Message, Consumer<Message>> rest) {
        return (m, l) -> {
            if (m instanceof Message.FileRequest r && r.op() instanceof FileOp.Stat st) {
                l.accept(new Message.FileEntries(m.channel(), List.of(stat(st.path()))));
                l.accept(new Message.Exited(m.channel(), 0, 0));
            } else {
                rest.accept(m, l);
            }
        };
    }

    @Test
    void aReadRefusesAFileBeyondItsBoundBeforeAnyByte() {
        guest.answer = (m, l) -> {
            if (m instanceof Message.GetFile g) {
                l.accept(new Message.FileInfo(g.channel(), 1000, 0644));
            }
        };
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThatThrownBy(() -> files.read(guest, "/big", out, 999)).isInstanceOf(FileOpException.class)
                .satisfies(e -> assertThat(((FileOpException) e).code()).isEqualTo(Message.ErrorCode.LIMIT));
        assertThat(out.size()).isZero();
        assertThat(guest.abandoned).hasSize(1);
    }

    @Test
    void aReadPassesTheBytesOnAndCreditsThem() {
        guest.answer = (m, l) -> {
            if (m instanceof Message.GetFile g) {
                l.accept(new Message.FileInfo(g.channel(), 6, 0644));
                l.accept(new Message.Data(g.channel(), Message.Stream.STDOUT, "hel".getBytes()));
                l.accept(new Message.Data(g.channel(), Message.Stream.STDOUT, "lo\n".getBytes()));
                l.accept(new Message.Eof(g.channel(), Message.Stream.STDOUT));
                l.accept(new Message.Exited(g.channel(), 0, 0));
            }
        };
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThat(files.read(guest, "/f", out, 100)).isEqualTo(6);
        assertThat(out.toString()).isEqualTo("hello\n");
        assertThat(guest.sent.stream().filter(m -> m instanceof Message.Credit).mapToInt(m -> ((Message.Credit) m)
                .bytes()).sum()).isEqualTo(6);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
