package dev.kosa8.e2b;

import dev.kosa8.processes.Guest;
import dev.kosa8.processes.ProcessInfo;
import dev.kosa8.processes.ProcessLimits;
import dev.kosa8.processes.Processes;
import dev.kosa8.protocol.Message;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A backend with no VM, for the listener's own tests: sandboxes are names, and each guest answers at once: a
 * setup command exits 0, any other command says it started, prints "ran ARGV" and exits 0; a file read is not
 * found; a file written is taken whole.
 */
final class FakeBackend implements E2bBackend {
    final Map<String, Machine> machines = new ConcurrentHashMap<>();
    final Processes processes = new Processes(ProcessLimits.DEFAULT);
    private final AtomicInteger ids = new AtomicInteger();
    final dev.kosa8.files.GuestFiles files = new dev.kosa8.files.GuestFiles(dev.kosa8.files.FileLimits.DEFAULT);

    @Override
    public String create(String image, int cpus, int memoryMiB) {
        String id = "sbx" + ids.incrementAndGet();
        machines.put(id, new Machine(id, image, State.RUNNING, cpus, memoryMiB, Instant.now()));
        return id;
    }

    @Override
    public Optional<Machine> find(String id) {
        return Optional.ofNullable(machines.get(id));
    }

    @Override
    public void remove(String id) {
        machines.remove(id);
    }

    @Override
    public void pause(String id) {
        machines.computeIfPresent(id, (k, m) -> new Machine(k, m.image(), State.PAUSED, m.cpus(), m.memoryMiB(),
                m.created()));
    }

    @Override
    public void resume(String id) {
        machines.computeIfPresent(id, (k, m) -> new Machine(k, m.image(), State.RUNNING, m.cpus(), m.memoryMiB(),
                m.created()));
    }

    @Override
    public Guest guest(String id) {
        return new FakeGuest();
    }

    @Override
    public dev.kosa8.files.FileGuest fileGuest(String id) {
        return new FakeGuest();
    }

    @Override
    public dev.kosa8.files.GuestFiles files() {
        return files;
    }

    @Override
    public ProcessInfo start(String id, Processes.Start start) {
        return processes.start(id, new FakeGuest(), start);
    }

    @Override
    public Processes processes() {
        return processes;
    }

    /** A guest answering at once. */
    static final class FakeGuest implements Guest, dev.kosa8.files.FileGuest {
        private final Map<Integer, Consumer<Message>> channels = new ConcurrentHashMap<>();
        private final AtomicInteger next = new AtomicInteger(100);

        @Override
        public int open(Consumer<Message> listener) {
            int ch = next.incrementAndGet();
            channels.put(ch, listener);
            return ch;
        }

        @Override
        public void send(Message m) {
            switch (m) {
                case Message.Exec e -> {
                    Consumer<Message> l = channels.get(e.channel());
                    if (e.spec().argv().getFirst().equals("/bin/sh")) {
                        l.accept(new Message.Exited(e.channel(), 0, 0));
                        return;
                    }
                    l.accept(new Message.Started(e.channel(), 1000 + e.channel()));
                    l.accept(new Message.Data(e.channel(), Message.Stream.STDOUT,
                            ("ran " + e.spec().argv() + " as " + e.spec().user() + " in " + e.spec().cwd() + "\n")
                                    .getBytes()));
                    l.accept(new Message.Exited(e.channel(), 0, 0));
                }
                case Message.GetFile g -> channels.get(g.channel()).accept(new Message.Failed(g.channel(),
                        Message.ErrorCode.NOT_FOUND, "no such file"));
                case Message.Data d -> channels.get(d.channel()).accept(new Message.Credit(d.channel(),
                        Message.Stream.STDIN, d.bytes().length));
                case Message.Eof e -> {
                    Consumer<Message> l = channels.get(e.channel());
                    if (l != null && pendingPut(e.channel())) {
                        l.accept(new Message.Exited(e.channel(), 0, 0));
                    }
                }
                case Message.PutFile p -> puts.add(p.channel());
                case Message.FileRequest r -> {
                    Consumer<Message> l = channels.get(r.channel());
                    if (r.op() instanceof dev.kosa8.protocol.FileOp.Watch w) {
                        l.accept(new Message.Started(r.channel(), 0));
                        l.accept(new Message.WatchEvents(r.channel(), java.util.List.of(new dev.kosa8.protocol.WatchEvent(
                                dev.kosa8.protocol.WatchEvent.Kind.CREATE, w.path() + "/new.txt"))));
                        return;
                    }
                    String path = switch (r.op()) {
                        case dev.kosa8.protocol.FileOp.Stat st -> st.path();
                        case dev.kosa8.protocol.FileOp.MakeDir md -> md.path();
                        default -> null;
                    };
                    if (path == null) {
                        l.accept(new Message.Failed(r.channel(), Message.ErrorCode.INVALID, "not in this fake"));
                        return;
                    }
                    l.accept(new Message.FileEntries(r.channel(), java.util.List.of(new dev.kosa8.protocol.FileStat(
                            path, r.op() instanceof dev.kosa8.protocol.FileOp.MakeDir
                            ? dev.kosa8.protocol.FileStat.Type.DIRECTORY : dev.kosa8.protocol.FileStat.Type.FILE,
                            1, 0644, 1000, 1000, "user", "user", 0, ""))));
                    l.accept(new Message.Exited(r.channel(), 0, 0));
                }
                default -> { }
            }
        }

        private final java.util.Set<Integer> puts = ConcurrentHashMap.newKeySet();

        @Override
        public void abandon(int channel) {
            channels.remove(channel);
        }

        private boolean pendingPut(int ch) {
            return puts.remove(ch);
        }
    }
}
