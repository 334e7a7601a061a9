package dev.kosa8.protocol;

import java.util.List;
import java.util.Map;

/**
 * Every message that crosses the host–guest boundary, and the daemon–CLI
 * stream after an exec's HTTP upgrade. Handled by exhaustive {@code switch}.
 *
 * <p>Messages carry a channel: 0 is the control channel (hello, ping); every
 * exec or file transfer gets its own channel, chosen by the side that starts
 * it (the host). Output is flow-controlled per channel and stream by
 * {@link Credit}: a sender may have at most {@link Limits#INITIAL_WINDOW}
 * bytes outstanding that the receiver has not yet credited back, so a slow
 * reader never makes the other side buffer without bound.
 */
public sealed interface Message {

    /** The channel this message belongs to; 0 is the control channel. */
    int channel();

    /** First message from each side. The host sends it; the agent answers with its own. */
    record Hello(int version, String software, long bootMillis) implements Message {
        public Hello {
            software = Limits.checkText("software", software, Limits.MAX_SHORT_TEXT);
        }

        @Override
        public int channel() {
            return 0;
        }
    }

    /** Liveness probe; the other side answers {@link Pong} with the same nonce. */
    record Ping(long nonce) implements Message {
        @Override
        public int channel() {
            return 0;
        }
    }

    record Pong(long nonce) implements Message {
        @Override
        public int channel() {
            return 0;
        }
    }

    /** Starts a process in the guest on a new channel. */
    record Exec(int channel, ExecSpec spec) implements Message {
        public Exec {
            Limits.checkChannel(channel);
        }
    }

    /** The process has started. */
    record Started(int channel, long pid) implements Message {
        public Started {
            Limits.checkChannel(channel);
        }
    }

    /** Bytes of one stream of a channel: stdin towards the guest, stdout/stderr back. */
    record Data(int channel, Stream stream, byte[] bytes) implements Message {
        public Data {
            Limits.checkChannel(channel);
            if (bytes.length > Limits.MAX_DATA) {
                throw new ProtocolException("data chunk of " + bytes.length + " bytes exceeds " + Limits.MAX_DATA);
            }
        }

        @Override
        public String toString() {
            return "Data[channel=" + channel + ", stream=" + stream + ", bytes=" + bytes.length + "]";
        }
    }

    /** The end of one stream of a channel. */
    record Eof(int channel, Stream stream) implements Message {
        public Eof {
            Limits.checkChannel(channel);
        }
    }

    /**
     * The receiver of a stream has consumed {@code bytes} more and grants that much more window (the network link's
     * agent adds what it grows the window by, and credits in steps: docs/network.md). A credit of 0 is allowed and
     * changes nothing: a peer may send an empty one.
     */
    record Credit(int channel, Stream stream, int bytes) implements Message {
        public Credit {
            Limits.checkChannel(channel);
            if (bytes < 0 || bytes > Limits.INITIAL_WINDOW) {
                throw new ProtocolException("credit of " + bytes + " bytes is out of range");
            }
        }
    }

    /** Delivers a signal to the channel's process (its process group for a TTY exec). */
    record Signal(int channel, int signal) implements Message {
        public Signal {
            Limits.checkChannel(channel);
            if (signal < 1 || signal > 64) {
                throw new ProtocolException("signal " + signal + " is out of range 1..64");
            }
        }
    }

    /** The terminal of a TTY exec was resized. */
    record Resize(int channel, int rows, int columns) implements Message {
        public Resize {
            Limits.checkChannel(channel);
            Limits.checkWindowSize(rows, columns);
        }
    }

    /**
     * The channel's work is over. For a process: its exit code, or the signal
     * that killed it (then {@code exitCode} is 128 + signal, as a shell reports).
     */
    record Exited(int channel, int exitCode, int signal) implements Message {
        public Exited {
            Limits.checkChannel(channel);
        }
    }

    /** The channel's request could not be carried out; the channel is over. */
    record Failed(int channel, ErrorCode code, String message) implements Message {
        public Failed {
            Limits.checkChannel(channel);
            message = Limits.checkText("message", message, Limits.MAX_SHORT_TEXT);
        }
    }

    /**
     * Writes a guest file from the channel's stdin stream; answered by Exited(0) or Failed. {@code user} (a name or
     * uid; empty: none) owns the file written; with none, a file replaced keeps its owner and a new one is root's.
     */
    record PutFile(int channel, String path, int mode, String user) implements Message {
        public PutFile {
            Limits.checkChannel(channel);
            path = Limits.checkPath(path);
            FileOp.checkMode(mode);
            user = Limits.checkUser(user);
        }

        public PutFile(int channel, String path, int mode) {
            this(channel, path, mode, "");
        }
    }

    /**
     * A file operation ({@link FileOp}, which says how each is answered) run by the agent as root, for
     * {@code user} (a name or uid; empty: root): what it makes (directories) is that user's.
     */
    record FileRequest(int channel, String user, FileOp op) implements Message {
        public FileRequest {
            Limits.checkChannel(channel);
            user = Limits.checkUser(user);
            java.util.Objects.requireNonNull(op, "op");
        }
    }

    /** Stats the agent answers a {@link FileRequest} with: one for a stat, a batch of a listing. */
    record FileEntries(int channel, List<FileStat> entries) implements Message {
        public FileEntries {
            Limits.checkChannel(channel);
            entries = List.copyOf(entries);
        }
    }

    /** Changes a {@link FileOp.Watch} saw, in the order seen. */
    record WatchEvents(int channel, List<WatchEvent> events) implements Message {
        public WatchEvents {
            Limits.checkChannel(channel);
            events = List.copyOf(events);
            if (events.isEmpty()) {
                throw new ProtocolException("a batch of no events");
            }
        }
    }

    /** Reads a guest file: answered by FileInfo, stdout Data, Eof and Exited(0), or Failed. */
    record GetFile(int channel, String path) implements Message {
        public GetFile {
            Limits.checkChannel(channel);
            path = Limits.checkPath(path);
        }
    }

    /**
     * Mounts the workspace: the agent relays the workspace's virtio-serial port
     * to a unix socket, mounts it with the kernel's 9p client at
     * {@code /workspace}, and binds that at {@code guestPath} too (the folder's
     * path on the host, so paths printed by tools mean the same on both sides;
     * empty for none). Answered by Exited(0) or Failed.
     *
     * @param msize  the 9p message size to mount with
     * @param afresh whether a mount already there is to be replaced: its server was replaced without its
     *               state (the daemon restarted), so what it waits on is failed and the folder mounted anew;
     *               otherwise a mount already there is kept and the request answered at once
     * @param cache  whether the guest caches the folder (cache=loose, kept true to the host by the
     *               module's notices); only through the module: the relay's mount never caches
     */
    record MountWorkspace(int channel, String guestPath, int msize, boolean afresh, boolean relay, boolean cache)
            implements Message {
        /** {@code relay}: through the agent's relay even where the guest kernel has kosa8's own 9p transport. */
        public MountWorkspace {
            Limits.checkChannel(channel);
            if (!guestPath.isEmpty()) {
                guestPath = Limits.checkPath(guestPath);
            }
            if (msize < 8192 || msize > 16 << 20) {
                throw new ProtocolException("msize " + msize + " is out of range 8 KiB..16 MiB");
            }
        }
    }

    /**
     * Freezes every sandbox process (the cgroup v2 freezer; the agent and its
     * relays are outside it), then syncs the guest's file systems: the first
     * step of a checkpoint. Answered by Exited(0) once frozen, or Failed (and
     * nothing stays frozen) when that took longer than {@code timeoutMillis}.
     */
    record Freeze(int channel, int timeoutMillis) implements Message {
        public Freeze {
            Limits.checkChannel(channel);
            if (timeoutMillis < 1 || timeoutMillis > 600_000) {
                throw new ProtocolException("freeze timeout " + timeoutMillis + " ms is out of range 1..600000");
            }
        }
    }

    /**
     * Thaws the sandbox processes: the last step of a checkpoint or a rewind.
     * First, when given, sets the guest's clock to {@code epochMillis} (a
     * rewound guest's clock stands at the checkpoint's instant) and mixes
     * {@code seed} into the kernel's random pool and reseeds it (a restored
     * RAM must not repeat the random numbers of the last restore). Answered
     * by Exited(0) or Failed.
     *
     * @param epochMillis the host's time, or 0 to leave the clock alone
     * @param seed        fresh random bytes from the host, or none
     */
    record Thaw(int channel, long epochMillis, byte[] seed) implements Message {
        public Thaw {
            Limits.checkChannel(channel);
            if (epochMillis < 0) {
                throw new ProtocolException("negative clock");
            }
            if (seed.length > 512) {
                throw new ProtocolException("seed of " + seed.length + " bytes exceeds 512");
            }
            seed = seed.clone();
        }

        @Override
        public byte[] seed() {
            return seed.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Thaw t && t.channel == channel && t.epochMillis == epochMillis
                    && java.util.Arrays.equals(t.seed, seed);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(channel, epochMillis, java.util.Arrays.hashCode(seed));
        }

        @Override
        public String toString() {
            return "Thaw[channel=" + channel + ", epochMillis=" + epochMillis + ", seed=" + seed.length + " bytes]";
        }
    }

    /**
     * Net link only ({@link NetLink}): a guest program connected to the broker's address on {@code port}; the
     * agent names the channel of the new stream.
     */
    record NetOpen(int channel, int port) implements Message {
        public NetOpen {
            Limits.checkChannel(channel);
            NetLink.checkPort(port);
        }
    }

    /**
     * Net link only ({@link NetLink}): the stream on the channel ends at once, both ways. From the host it
     * refuses the stream or says the broker's side broke off; from the agent, the guest's connection broke.
     */
    record NetReset(int channel) implements Message {
        public NetReset {
            Limits.checkChannel(channel);
        }
    }

    /**
     * Net link only, agent to host, once per session right after the agent's Hello: the agent reads the network
     * window ({@link NetLink#WINDOW_SERIAL}), so the host may send a stream's larger pieces through it
     * ({@link NetWindowData}). Without it the host sends every byte through the port.
     */
    record NetWindowReady() implements Message {
        @Override
        public int channel() {
            return 0;
        }
    }

    /**
     * Net link only, host to agent: in place of a {@link Data} towards the guest on {@code channel}, its
     * {@code count} bytes lie in {@code slot} of the network window, behind a header that repeats {@code serial}
     * ({@link NetLink#SLOT_HEADER}). The agent reads them, gives the slot back ({@link NetWindowReturn}) and goes on as
     * for a Data; a header with another serial (a machine restored from a checkpoint reading what a later session
     * wrote) resets the stream instead.
     */
    record NetWindowData(int channel, int slot, int count, long serial) implements Message {
        public NetWindowData {
            Limits.checkChannel(channel);
            NetLink.checkSlot(slot);
            if (count < 1 || count > NetLink.SLOT_DATA) {
                throw new ProtocolException("a window slot holds 1 to " + NetLink.SLOT_DATA + " bytes, not " + count);
            }
        }
    }

    /**
     * Net link only, agent to host: the agent has read {@code slot}, lent under {@code serial}; the host may write
     * it again. One that names a slot not lent under that serial frees nothing.
     */
    record NetWindowReturn(int slot, long serial) implements Message {
        public NetWindowReturn {
            NetLink.checkSlot(slot);
        }

        @Override
        public int channel() {
            return 0;
        }
    }

    /**
     * A published port ({@link PortLink}): the host accepted a connection on the host's side and asks the agent to
     * connect to {@code port} on the guest's loopback, carrying it on this channel. Host to guest only: the guest
     * has no message that opens anything on the host. Answered by {@link Started} once connected (then the
     * connection's bytes flow as {@link Data}, {@link Eof} and {@link Credit}, stdin towards the guest, stdout back,
     * within {@link PortLink#WINDOW}, and {@link Exited} when both ways are over), or {@link Failed} when nothing
     * accepts it or the connection breaks. A {@link Signal} from the host resets it.
     */
    record Connect(int channel, int port) implements Message {
        public Connect {
            Limits.checkChannel(channel);
            NetLink.checkPort(port);
        }
    }

    /**
     * The guest asks for a turn checkpoint (docs/agents.md): the agent sends it on behalf of a guest program
     * ({@code kosa8-guest checkpoint}). It carries a label and nothing else: which checkpoint, where it is kept,
     * how many are kept and how often one may be taken are the host's to decide. Answered by {@link Answer}
     * with the same id; one ask at a time.
     *
     * @param id    the agent's number for this ask, positive
     * @param label what the turn is about, for the user to read ({@code Bash}, {@code Edit src/a.c}); one line
     */
    record Ask(long id, String label) implements Message {
        public Ask {
            if (id <= 0) {
                throw new ProtocolException("ask id " + id + " is not positive");
            }
            label = Limits.checkLabel(label);
        }

        @Override
        public int channel() {
            return 0;
        }
    }

    /**
     * The host's answer to an {@link Ask}. {@link Outcome#FORGOTTEN} with id 0 answers every ask still waiting:
     * the host that received them is gone (a restored or re-attached machine).
     */
    record Answer(long id, Outcome outcome, String text) implements Message {
        public Answer {
            if (id < 0 || (id == 0 && outcome != Outcome.FORGOTTEN)) {
                throw new ProtocolException("answer id " + id + " does not name an ask");
            }
            text = Limits.checkText("answer", text, Limits.MAX_SHORT_TEXT);
        }

        @Override
        public int channel() {
            return 0;
        }
    }

    /** What became of an {@link Ask}. */
    enum Outcome {
        /** The checkpoint was taken; the text names it. */
        TAKEN,
        /** No checkpoint: a bound was hit, or the machine could not be checkpointed; the text says which. */
        REFUSED,
        /** The machine was rewound (or forked) to the checkpoint this ask made: what was to follow it has not run. */
        REWOUND,
        /** The host that received the ask is gone; whether a checkpoint was taken is unknown here. */
        FORGOTTEN
    }

    /** Size and mode of a file about to be streamed by {@link GetFile}. */
    record FileInfo(int channel, long size, int mode) implements Message {
        public FileInfo {
            Limits.checkChannel(channel);
            if (size < 0) {
                throw new ProtocolException("negative file size");
            }
        }
    }

    /** The standard streams of a channel. */
    enum Stream {
        STDIN, STDOUT, STDERR
    }

    /** Why a channel's request failed, so the host can map it to a user message. */
    enum ErrorCode {
        /** The program was not found or not executable. */
        NOT_FOUND,
        /** Permission denied. */
        PERMISSION,
        /** The request was malformed or refused. */
        INVALID,
        /** The guest ran out of a resource (processes, memory, PTYs). */
        RESOURCES,
        /** Anything else. */
        INTERNAL,
        /** The file is already there (EEXIST). */
        EXISTS,
        /** A part of the path is not a directory (ENOTDIR), or a directory was expected. */
        NOT_DIRECTORY,
        /** The path is a directory where a file was expected (EISDIR). */
        IS_DIRECTORY,
        /** The directory is not empty (ENOTEMPTY). */
        NOT_EMPTY,
        /** The path or one of its names is too long (ENAMETOOLONG). */
        TOO_LONG,
        /** The guest's disk is full (ENOSPC, EDQUOT). */
        NO_SPACE,
        /** A bound was reached: watches per sandbox, directories per watch. */
        LIMIT,
        /**
         * The host put the sandbox back to a checkpoint while the channel was open: the process it served is not in
         * the machine that runs now (sent by the host to its own clients, never by the agent).
         */
        REWOUND
    }

    /**
     * How to run a process.
     *
     * @param argv     program and arguments; the program is looked up on the guest's PATH
     * @param env      variables added to the guest's default environment
     * @param cwd      working directory, absolute; empty for the default
     * @param user     user name or uid to run as; empty for root
     * @param tty      whether to allocate a pseudo-terminal (stdout and stderr are then one stream)
     * @param rows     terminal rows when {@code tty}
     * @param columns  terminal columns when {@code tty}
     */
    record ExecSpec(List<String> argv, Map<String, String> env, String cwd, String user,
                    boolean tty, int rows, int columns) {
        public ExecSpec {
            argv = List.copyOf(argv);
            env = Map.copyOf(env);
            if (argv.isEmpty()) {
                throw new ProtocolException("argv is empty");
            }
            if (argv.size() > Limits.MAX_LIST) {
                throw new ProtocolException("argv has " + argv.size() + " entries, more than " + Limits.MAX_LIST);
            }
            if (env.size() > Limits.MAX_LIST) {
                throw new ProtocolException("env has " + env.size() + " entries, more than " + Limits.MAX_LIST);
            }
            for (String a : argv) {
                Limits.checkNoNul("argv", a);
            }
            for (var e : env.entrySet()) {
                Limits.checkNoNul("env name", e.getKey());
                Limits.checkNoNul("env value", e.getValue());
                if (e.getKey().isEmpty() || e.getKey().indexOf('=') >= 0) {
                    throw new ProtocolException("bad environment variable name: " + e.getKey());
                }
            }
            cwd = cwd == null ? "" : cwd;
            user = user == null ? "" : user;
            Limits.checkNoNul("cwd", cwd);
            Limits.checkNoNul("user", user);
            if (!cwd.isEmpty() && !cwd.startsWith("/")) {
                throw new ProtocolException("cwd must be absolute: " + cwd);
            }
            if (tty) {
                Limits.checkWindowSize(rows, columns);
            }
        }

        public static ExecSpec of(String... argv) {
            return new ExecSpec(List.of(argv), Map.of(), "", "", false, 0, 0);
        }
    }
}
