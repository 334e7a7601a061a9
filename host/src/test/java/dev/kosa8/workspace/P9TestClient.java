package dev.kosa8.workspace;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.Ws9p;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A 9P2000.L client for host-side tests of {@link WorkspaceServer}: it serves a folder over a
 * fresh unix socket pair, sends frames (encoded ones, or any bytes for hostile frames), and
 * matches replies by tag. Every wait has a deadline, so a server that hangs fails the test
 * instead of hanging it. Not thread-safe except that {@link #send} may be called from several
 * threads; replies are read by one thread of its own.
 *
 * <p>Given a read window ({@link #connect(Path, Path, boolean, Path)}), it
 * plays the guest's relay: an Rreadw becomes the Rread it stands for, read
 * from the window file, and its slot goes back with a Treturn; the raw
 * Rreadw frames are kept ({@link #windowed}).
 */
final class P9TestClient implements AutoCloseable {
    static final Duration TIMEOUT = Duration.ofSeconds(5);
    static final int ROOT = 0;
    /** Linux open flags as 9P2000.L carries them. */
    static final int O_RDONLY = 0, O_WRONLY = 1, O_RDWR = 2, O_CREAT = 0100, O_EXCL = 0200, O_TRUNC = 01000,
            O_DIRECTORY = 0200000;

    private static final ByteBuffer EOF = ByteBuffer.allocate(0);

    private final SocketChannel channel;
    private final WorkspaceServer server;
    /** The read window file, or null: then an Rreadw is passed on as it is. */
    private final Path window;
    private final List<ByteBuffer> windowed = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The write window file, or null. */
    private Path writes;
    /** Whether an Rreadw's slot goes back at once (else a test returns it with {@link #giveBack}). */
    volatile boolean returnSlots = true;
    private final Queue<String> log;
    private final BlockingQueue<ByteBuffer> frames = new LinkedBlockingQueue<>();
    private final Map<Integer, ByteBuffer> early = new HashMap<>();
    private final Queue<Integer> arrivals = new ConcurrentLinkedQueue<>();
    /** Every frame as it came, once a test asks for it ({@link #keepStream}). */
    private final Queue<ByteBuffer> stream = new ConcurrentLinkedQueue<>();
    private volatile boolean keepStream;
    private final Thread reader;
    private int nextTag = 1;
    private volatile boolean eof;
    private boolean closed;

    private P9TestClient(SocketChannel channel, WorkspaceServer server, Path window, Queue<String> log) {
        this.channel = channel;
        this.server = server;
        this.window = window;
        this.log = log;
        this.reader = new Thread(this::readLoop, "p9-test-client");
        this.reader.setDaemon(true);
        this.reader.start();
    }

    /** Serves {@code folder} to a new client; the socket lives in a private directory under {@code scratch}. */
    static P9TestClient connect(Path folder, Path scratch) throws Exception {
        return connect(folder, scratch, false);
    }

    /** As {@link #connect(Path, Path)}; with {@code newSession}, the server skips what comes before a Tversion. */
    static P9TestClient connect(Path folder, Path scratch, boolean newSession) throws Exception {
        return connect(folder, scratch, newSession, null);
    }

    /**
     * As {@link #connect(Path, Path, boolean)}, the server given {@code window} (a file of
     * {@code VmSpec.WORKSPACE_WINDOW_BYTES}, or null) as its read window, which this client reads as the relay does.
     */
    static P9TestClient connect(Path folder, Path scratch, boolean newSession, Path window) throws Exception {
        return connect(folder, scratch, newSession, window, null);
    }

    /**
     * As {@link #connect(Path, Path, boolean, Path)}, the server also given {@code writes} (a file of
     * {@code VmSpec.WORKSPACE_WRITES_BYTES}, or null) as its write window, which {@link #writeThroughWindow}
     * writes as the relay does.
     */
    static P9TestClient connect(Path folder, Path scratch, boolean newSession, Path window, Path writes)
            throws Exception {
        return connect(folder, scratch, newSession, window, writes, null);
    }

    /** Connects, negotiates and attaches a server that holds what {@code held}'s policy holds. */
    static P9TestClient attachedHeld(Path folder, Path scratch, HeldChanges held) throws Exception {
        P9TestClient c = connect(folder, scratch, false, null, null, held);
        assertThat(c.version()).isEqualTo(new P9Reply.Version(WorkspaceServer.MSIZE, P9Operations.VERSION));
        assertThat(c.attach(ROOT)).isInstanceOf(P9Reply.Attach.class);
        return c;
    }

    static P9TestClient connect(Path folder, Path scratch, boolean newSession, Path window, Path writes,
                                HeldChanges held) throws Exception {
        return connect(folder, scratch, newSession, window, writes, held, false);
    }

    /** As above, the guest allowed to cache the folder ({@link FolderNotices}) or not. */
    static P9TestClient connect(Path folder, Path scratch, boolean newSession, Path window, Path writes,
                                HeldChanges held, boolean cache) throws Exception {
        Path dir = Files.createTempDirectory(scratch, "sock");
        Path socket = dir.resolve("s");
        Queue<String> log = new ConcurrentLinkedQueue<>();
        try (ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            listener.bind(UnixDomainSocketAddress.of(socket));
            SocketChannel client = SocketChannel.open(UnixDomainSocketAddress.of(socket));
            SocketChannel accepted = listener.accept();
            WorkspaceServer server = WorkspaceServer.serve(folder, accepted, window, writes, log::add, newSession,
                    held, cache);
            P9TestClient c = new P9TestClient(client, server, window, log);
            c.writes = writes;
            return c;
        } finally {
            Files.deleteIfExists(socket);
            Files.deleteIfExists(dir);
        }
    }

    /**
     * A server connected as a restore connects it ({@link WorkspaceServer#connect}, to a socket this client
     * listens on, as QEMU's chardev does): it reads nothing until a test calls {@code serve()}.
     */
    static P9TestClient connectHeld(Path folder, Path scratch) throws Exception {
        Path dir = Files.createTempDirectory(scratch, "sock");
        Path socket = dir.resolve("s");
        Queue<String> log = new ConcurrentLinkedQueue<>();
        try (ServerSocketChannel listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            listener.bind(UnixDomainSocketAddress.of(socket));
            WorkspaceServer server = WorkspaceServer.connect(folder, socket, null, null, TIMEOUT, log::add, null,
                    false);
            return new P9TestClient(listener.accept(), server, null, log);
        } finally {
            Files.deleteIfExists(socket);
            Files.deleteIfExists(dir);
        }
    }

    /** Connects, then negotiates the protocol and attaches fid {@link #ROOT} to the folder. */
    static P9TestClient attached(Path folder, Path scratch) throws Exception {
        P9TestClient c = connect(folder, scratch);
        assertThat(c.version()).isEqualTo(new P9Reply.Version(WorkspaceServer.MSIZE, P9Operations.VERSION));
        assertThat(c.attach(ROOT)).isInstanceOf(P9Reply.Attach.class);
        return c;
    }

    /** Connects with a read window, negotiates, asks for the window as the relay does, and attaches. */
    static P9TestClient attachedWithWindow(Path folder, Path scratch, Path window) throws Exception {
        return attachedWithWindows(folder, scratch, window, null);
    }

    /** As {@link #attachedWithWindow}, the server also given a write window ({@code writes}, or null). */
    static P9TestClient attachedWithWindows(Path folder, Path scratch, Path window, Path writes) throws Exception {
        P9TestClient c = connect(folder, scratch, false, window, writes);
        assertThat(c.version()).isEqualTo(new P9Reply.Version(WorkspaceServer.MSIZE, P9Operations.VERSION));
        c.askForWindow();
        assertThat(c.attach(ROOT)).isInstanceOf(P9Reply.Attach.class);
        return c;
    }

    /** A new read window file, sparse, of the size a sandbox's QEMU gets. */
    static Path windowFile(Path dir) throws IOException {
        return sparseFile(dir, "", dev.kosa8.vm.VmSpec.WORKSPACE_WINDOW_BYTES);
    }

    /** A new write window file, sparse, of the size a sandbox's QEMU gets. */
    static Path writesFile(Path dir) throws IOException {
        return sparseFile(dir, ".writes", dev.kosa8.vm.VmSpec.WORKSPACE_WRITES_BYTES);
    }

    private static Path sparseFile(Path dir, String suffix, long bytes) throws IOException {
        Path w = Files.createTempFile(dir, "window", suffix);
        try (var f = java.nio.channels.FileChannel.open(w, java.nio.file.StandardOpenOption.WRITE)) {
            f.write(ByteBuffer.allocate(1), bytes - 1);
        }
        return w;
    }

    /**
     * As the guest's relay sends a large Twrite: {@code data} written into {@code slot} of the write window,
     * then a Twritew with the Twrite's header and the slot. Returns the tag.
     */
    int writeThroughWindow(int fid, long offset, byte[] data, int slot) throws IOException {
        writeThroughWindowOnly(data, slot);
        return sendTwritew(fid, offset, data.length, slot);
    }

    /** Puts {@code data} into {@code slot} of the write window, as a guest may at any time. */
    void writeThroughWindowOnly(byte[] data, int slot) throws IOException {
        try (var f = java.nio.channels.FileChannel.open(writes, java.nio.file.StandardOpenOption.WRITE)) {
            f.write(ByteBuffer.wrap(data), (long) slot * Ws9p.SLOT_SIZE);
        }
    }

    /** A Twritew as the relay frames it, whatever its fields say; returns the tag. */
    synchronized int sendTwritew(int fid, long offset, long count, long slot) throws IOException {
        int tag = freshTag();
        ByteBuffer m = ByteBuffer.allocate(Ws9p.TWRITEW_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        m.putInt(Ws9p.TWRITEW_SIZE).put((byte) Ws9p.TWRITEW).putShort((short) tag).putInt(fid)
                .putLong(offset).putInt((int) count).putInt((int) slot);
        sendRaw(m.flip());
        return tag;
    }

    /** Twindow: the relay reads the window. */
    void askForWindow() throws IOException {
        ByteBuffer m = ByteBuffer.allocate(Ws9p.TWINDOW_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        m.putInt(Ws9p.TWINDOW_SIZE).put((byte) Ws9p.TWINDOW).putShort((short) P9Codec.NOTAG);
        sendRaw(m.flip());
    }

    /** Tquiet: the relay asks whether the server takes quiet clunks; the answer comes under NOTAG. */
    /** Tcache, as the module sends it once its mount caches. */
    void askCache() throws IOException {
        ByteBuffer m = ByteBuffer.allocate(Ws9p.TCACHE_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        m.putInt(Ws9p.TCACHE_SIZE).put((byte) Ws9p.TCACHE).putShort((short) P9Codec.NOTAG);
        sendRaw(m.flip());
    }

    /** Tsync {@code seq}, as the module sends it before a command starts. */
    void askSync(int seq) throws IOException {
        ByteBuffer m = ByteBuffer.allocate(Ws9p.SYNC_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        m.putInt(Ws9p.SYNC_SIZE).put((byte) Ws9p.TSYNC).putShort((short) P9Codec.NOTAG).putInt(seq);
        sendRaw(m.flip());
    }

    void askQuiet() throws IOException {
        ByteBuffer m = ByteBuffer.allocate(Ws9p.TQUIET_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        m.putInt(Ws9p.TQUIET_SIZE).put((byte) Ws9p.TQUIET).putShort((short) P9Codec.NOTAG);
        sendRaw(m.flip());
    }

    /** Twalkq cloning {@code fid} to {@code newFid}, as the module sends a clone walk it has answered; returns its tag. */
    synchronized int cloneQuietly(int fid, int newFid) throws IOException {
        int tag = freshTag();
        ByteBuffer m = ByteBuffer.allocate(Ws9p.TWALKQ_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        m.putInt(Ws9p.TWALKQ_SIZE).put((byte) Ws9p.TWALKQ).putShort((short) tag).putInt(fid).putInt(newFid)
                .putShort((short) 0);
        sendRaw(m.flip());
        return tag;
    }

    /** Tlopenq of {@code fid}, as the module sends a read-only Tlopen it has answered itself; returns its tag, NOTAG. */
    synchronized int openQuietly(int fid, int flags) throws IOException {
        int tag = P9Codec.NOTAG;
        ByteBuffer m = ByteBuffer.allocate(Ws9p.TLOPENQ_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        m.putInt(Ws9p.TLOPENQ_SIZE).put((byte) Ws9p.TLOPENQ).putShort((short) tag).putInt(fid).putInt(flags);
        sendRaw(m.flip());
        return tag;
    }

    /** Tclunkq of {@code fid}, as the relay sends a Tclunk it has answered itself; returns its tag (never answered). */
    synchronized int clunkQuietly(int fid) throws IOException {
        int tag = freshTag();
        ByteBuffer m = ByteBuffer.allocate(Ws9p.TCLUNKQ_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        m.putInt(Ws9p.TCLUNKQ_SIZE).put((byte) Ws9p.TCLUNKQ).putShort((short) tag).putInt(fid);
        sendRaw(m.flip());
        return tag;
    }

    /** Treturn of {@code slot} under {@code serial}. */
    void giveBack(int slot, int serial) throws IOException {
        ByteBuffer m = ByteBuffer.allocate(Ws9p.TRETURN_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        m.putInt(Ws9p.TRETURN_SIZE).put((byte) Ws9p.TRETURN).putShort((short) P9Codec.NOTAG)
                .putInt(slot).putInt(serial);
        sendRaw(m.flip());
    }

    /** The Rreadw frames received so far, as they came (little-endian). */
    List<ByteBuffer> windowed() {
        return List.copyOf(windowed);
    }

    WorkspaceServer server() {
        return server;
    }

    /**
     * From now on, every frame received is also kept in {@link #stream}, in order, replies and notices
     * alike; a test that reads the stream so does not await frames by tag.
     */
    void keepStream() {
        keepStream = true;
    }

    /** The frames received since {@link #keepStream}, in the order they came (little-endian). */
    Queue<ByteBuffer> stream() {
        return stream;
    }

    /** The tags of the replies received so far, in the order they arrived. */
    List<Integer> arrivals() {
        return List.copyOf(arrivals);
    }

    /** What the server logged so far. */
    List<String> log() {
        return List.copyOf(log);
    }

    // --- the wire

    /** Encodes and sends a request under a fresh tag; returns the tag. */
    synchronized int send(P9Request request) throws IOException {
        int tag = freshTag();
        send(tag, request);
        return tag;
    }

    synchronized void send(int tag, P9Request request) throws IOException {
        sendRaw(encode(tag, request));
    }

    /** One request frame, as many bytes as it takes (names the decoder refuses included). */
    static ByteBuffer encode(int tag, P9Request request) {
        ByteBuffer out = ByteBuffer.allocate(8192);
        try {
            P9Codec.encodeRequest(tag, request, out);
        } catch (BufferOverflowException big) {
            out = ByteBuffer.allocate(WorkspaceServer.MSIZE + 64);
            P9Codec.encodeRequest(tag, request, out);
        }
        return out.flip();
    }

    synchronized void sendRaw(ByteBuffer bytes) throws IOException {
        while (bytes.hasRemaining()) {
            channel.write(bytes);
        }
    }

    synchronized void sendRaw(byte[] bytes) throws IOException {
        sendRaw(ByteBuffer.wrap(bytes));
    }

    synchronized int freshTag() {
        int tag = nextTag;
        nextTag = nextTag % 0xfffe + 1; // 1..65534: never NOTAG
        return tag;
    }

    /** The reply to {@code tag}, checked to be a well-formed frame; fails after {@link #TIMEOUT} or at EOF. */
    P9Reply await(int tag) throws Exception {
        return awaitResponse(tag, TIMEOUT).reply();
    }

    P9Response awaitResponse(int tag, Duration timeout) throws Exception {
        ByteBuffer frame = awaitFrame(tag, timeout);
        while (tag == P9Codec.NOTAG && ((frame.get(4) & 0xff) == Ws9p.RSYNC || (frame.get(4) & 0xff) == Ws9p.RNOTICE)) {
            frame = awaitFrame(tag, timeout); // the cache's own messages, also under NOTAG: not a Tversion's answer
        }
        P9Response r = P9Codec.decodeReply(frame);
        assertThat(r.tag()).isEqualTo(tag);
        return r;
    }

    /** The raw reply frame to {@code tag}. */
    ByteBuffer awaitFrame(int tag, Duration timeout) throws Exception {
        synchronized (early) {
            return awaitFrameLocked(tag, timeout);
        }
    }

    private ByteBuffer awaitFrameLocked(int tag, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            ByteBuffer kept = early.remove(tag);
            if (kept != null) {
                return kept;
            }
            if (eof) {
                throw new AssertionError("the server closed the connection before answering tag " + tag
                        + "; its log: " + log());
            }
            long left = deadline - System.nanoTime();
            ByteBuffer f = left <= 0 ? null : frames.poll(left, TimeUnit.NANOSECONDS);
            if (f == null) {
                throw new AssertionError("no reply to tag " + tag + " within " + timeout + "; server log: " + log());
            }
            if (f == EOF) {
                eof = true;
                continue;
            }
            int t = f.duplicate().order(ByteOrder.LITTLE_ENDIAN).getShort(5) & 0xffff;
            ByteBuffer previous = early.put(t, f);
            assertThat(previous).as("two replies to tag %d", t).isNull();
        }
    }

    /** Whether the server closes the connection within {@code timeout}; replies before the close are dropped. */
    boolean closedWithin(Duration timeout) throws InterruptedException {
        synchronized (early) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!eof) {
                long left = deadline - System.nanoTime();
                ByteBuffer f = left <= 0 ? null : frames.poll(left, TimeUnit.NANOSECONDS);
                if (f == null) {
                    return false;
                }
                eof = f == EOF;
            }
            return true;
        }
    }

    P9Reply call(P9Request request) throws Exception {
        return await(send(request));
    }

    private void readLoop() {
        ByteBuffer in = ByteBuffer.allocate(2 * WorkspaceServer.MSIZE + 64).order(ByteOrder.LITTLE_ENDIAN);
        try {
            while (channel.read(in) >= 0) {
                in.flip();
                while (in.remaining() >= 4) {
                    long size = Integer.toUnsignedLong(in.getInt(in.position()));
                    if (size < P9Codec.HEADER || size > WorkspaceServer.MSIZE) {
                        throw new IOException("the server sent a frame of " + size + " bytes");
                    }
                    if (in.remaining() < size) {
                        break;
                    }
                    byte[] frame = new byte[(int) size];
                    in.get(frame);
                    if (window != null && (frame[4] & 0xff) == Ws9p.RREADW) {
                        frame = fromWindow(frame);
                    }
                    arrivals.add(ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN).getShort(5) & 0xffff);
                    if (keepStream) {
                        stream.add(ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN));
                    }
                    frames.add(ByteBuffer.wrap(frame));
                }
                in.compact();
            }
        } catch (IOException e) {
            // closed by either side: the waiter sees EOF
        } finally {
            frames.add(EOF);
        }
    }

    /** What the relay does with an Rreadw: the Rread it stands for, the slot given back (unless a test holds it). */
    private byte[] fromWindow(byte[] rreadw) throws IOException {
        ByteBuffer m = ByteBuffer.wrap(rreadw).order(ByteOrder.LITTLE_ENDIAN);
        windowed.add(m.duplicate().order(ByteOrder.LITTLE_ENDIAN));
        int tag = m.getShort(5) & 0xffff;
        int count = m.getInt(7);
        int slot = m.getInt(11);
        byte[] rread = new byte[P9Codec.READ_DATA_OFFSET + count];
        ByteBuffer r = ByteBuffer.wrap(rread).order(ByteOrder.LITTLE_ENDIAN);
        r.putInt(rread.length).put((byte) 117).putShort((short) tag).putInt(count);
        try (var f = java.nio.channels.FileChannel.open(window)) {
            while (r.hasRemaining()) {
                if (f.read(r, (long) slot * Ws9p.SLOT_SIZE + r.position() - P9Codec.READ_DATA_OFFSET) < 0) {
                    throw new IOException("the window ends before slot " + slot + "'s data");
                }
            }
        }
        if (returnSlots) {
            giveBack(slot, m.getInt(15));
        }
        return rread;
    }

    // --- requests

    P9Reply version() throws Exception {
        return await(sendVersion(WorkspaceServer.MSIZE, P9Operations.VERSION));
    }

    int sendVersion(int msize, String version) throws IOException {
        send(P9Codec.NOTAG, new P9Request.Version(msize, version));
        return P9Codec.NOTAG;
    }

    P9Reply attach(int fid) throws Exception {
        return call(new P9Request.Attach(fid, P9Codec.NOFID, "root", "", 0));
    }

    P9Reply walk(int fid, int newFid, String... names) throws Exception {
        return call(new P9Request.Walk(fid, newFid, List.of(names)));
    }

    P9Reply lopen(int fid, int flags) throws Exception {
        return call(new P9Request.Lopen(fid, flags));
    }

    P9Reply lcreate(int fid, String name, int flags, int mode) throws Exception {
        return call(new P9Request.Lcreate(fid, name, flags, mode, 0));
    }

    P9Reply read(int fid, long offset, int count) throws Exception {
        return call(new P9Request.Read(fid, offset, count));
    }

    P9Reply write(int fid, long offset, byte[] data) throws Exception {
        return call(new P9Request.Write(fid, offset, ByteBuffer.wrap(data)));
    }

    P9Reply readdir(int fid, long offset, int count) throws Exception {
        return call(new P9Request.Readdir(fid, offset, count));
    }

    P9Reply getattr(int fid) throws Exception {
        return call(new P9Request.Getattr(fid, P9Operations.GETATTR_BASIC_AND_BTIME));
    }

    P9Reply setattr(P9Request.Setattr s) throws Exception {
        return call(s);
    }

    P9Reply clunk(int fid) throws Exception {
        return call(new P9Request.Clunk(fid));
    }

    P9Reply remove(int fid) throws Exception {
        return call(new P9Request.Remove(fid));
    }

    P9Reply mkdir(int dfid, String name, int mode) throws Exception {
        return call(new P9Request.Mkdir(dfid, name, mode, 0));
    }

    P9Reply mknod(int dfid, String name, int mode, int major, int minor) throws Exception {
        return call(new P9Request.Mknod(dfid, name, mode, major, minor, 0));
    }

    P9Reply symlink(int dfid, String name, String target) throws Exception {
        return call(new P9Request.Symlink(dfid, name, target, 0));
    }

    P9Reply readlink(int fid) throws Exception {
        return call(new P9Request.Readlink(fid));
    }

    P9Reply link(int dfid, int fid, String name) throws Exception {
        return call(new P9Request.Link(dfid, fid, name));
    }

    P9Reply rename(int fid, int dfid, String name) throws Exception {
        return call(new P9Request.Rename(fid, dfid, name));
    }

    P9Reply renameAt(int oldDir, String oldName, int newDir, String newName) throws Exception {
        return call(new P9Request.RenameAt(oldDir, oldName, newDir, newName));
    }

    P9Reply unlinkAt(int dfid, String name, int flags) throws Exception {
        return call(new P9Request.UnlinkAt(dfid, name, flags));
    }

    // --- reading replies

    /** The errno of an Rlerror, or 0 for any other reply. */
    static int errno(P9Reply r) {
        return r instanceof P9Reply.Lerror e ? e.errno() : 0;
    }

    /** The bytes of an Rread; fails on any other reply. */
    static byte[] data(P9Reply r) {
        assertThat(r).isInstanceOf(P9Reply.Read.class);
        ByteBuffer d = ((P9Reply.Read) r).data();
        byte[] b = new byte[d.remaining()];
        d.duplicate().get(b);
        return b;
    }

    /** Reads a whole open file from offset 0 in chunks of {@code chunk} bytes. */
    byte[] readAll(int fid, int chunk) throws Exception {
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        while (true) {
            byte[] b = data(read(fid, all.size(), chunk));
            if (b.length == 0) {
                return all.toByteArray();
            }
            all.write(b);
        }
    }

    /**
     * Closes, then fails the test if the server logged an internal error: a bug of the server's, whatever the
     * client sent (every test of the server ends with it).
     */
    public void closeWithoutInternalErrors() {
        close();
        assertThat(log()).as("the server's log").noneMatch(line -> line.startsWith("internal error"));
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        server.close();
        try {
            reader.join(TIMEOUT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
