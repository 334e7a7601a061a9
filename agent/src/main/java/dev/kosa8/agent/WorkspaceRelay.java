package dev.kosa8.agent;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Carries the workspace's 9p traffic between the guest kernel and the host.
 * The kernel's 9p client cannot write to a virtio-serial port itself (DESIGN
 * fact 6), so it mounts through a unix socket ({@code trans=unix}) that this
 * relay listens on, and the relay copies bytes between that socket and the
 * workspace's port, to the host's 9p server behind it.
 *
 * <p>Each direction is one platform thread with one buffer of native memory
 * as large as a whole 9p message, so a message crosses in one read and one
 * write, and no byte is copied in Java: the port is read and written with
 * read(2)/write(2) straight into that memory, and the socket through a direct
 * {@link ByteBuffer} view of it.
 *
 * <p>The port is opened once for the agent's life (a virtio-serial port opens
 * only once) and read by one thread for that life; a mount's connection comes
 * and goes. When the host's server is replaced without the guest's state
 * (the daemon restarted), the old mount's fids mean nothing to the new one,
 * so the host has the workspace mounted afresh: {@link #detach} closes the
 * old mount's connection, which fails every request the kernel still waits
 * on with EIO instead of leaving the process waiting forever, and then the
 * host's messages are dropped until the answer to the new mount's Tversion:
 * whatever came before it answers the old mount. (The host's server answers
 * every request it received before a Tversion before answering that.)
 *
 * <p>Large reads' data comes through the read window, a read-only disk, not
 * through the port (which hands the guest 4 KiB per read): the host sends
 * an Rreadw naming a slot of the window, the relay reads the slot with one
 * O_DIRECT pread, tells the host it may use the slot again (Treturn), and
 * gives the kernel the plain Rread. The relay asks for this once per mount,
 * with a Twindow after the mount's Tversion, and only if it could open the
 * disk. The host's {@code dev.kosa8.workspace.ReadWindow} documents the
 * three messages. Both directions write to the port (the Treturns come from
 * the reader of the port), so each writes whole messages under one lock.
 */
final class WorkspaceRelay {
    static final String PORT_NAME = "dev.kosa8.ws9p";
    static final Path SOCKET = Path.of("/run/kosa8/ws9p.sock");
    private static final int RVERSION = 101;
    private static final int RLERROR = 7, RREAD = 117;
    private static final int TWINDOW = 250, RREADW = 251, TRETURN = 252;
    private static final int RREADW_SIZE = 19, TRETURN_SIZE = 15;
    /** Each slot of the read window holds one reply's data (the host's msize). */
    private static final long WINDOW_SLOT = 1 << 20;
    /** O_DIRECT reads whole sectors. */
    private static final int SECTOR = 512;
    /** The serial number of the read window's disk (the host's {@code QemuCommandLine.WORKSPACE_WINDOW_SERIAL}). */
    static final String WINDOW_SERIAL = "kosa8-ws9p-window";
    private static final int NOTAG = 0xffff;
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort LE_SHORT =
            ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final int portFd;
    /** The read window's disk, opened O_DIRECT; -1 when the guest has none (the port carries everything). */
    private final int windowFd;
    private final int bufferSize;
    private final Object lock = new Object();
    /** Held while a whole message is written to the port: both threads write there. */
    private final Object portLock = new Object();
    /** Messages that could not be read from the window; logged the first time. */
    private int windowFailures;
    /** The current mount's connection; null between mounts. Guarded by {@link #lock}. */
    private SocketChannel kernel;
    private Thread up;
    private ServerSocketChannel listening;
    /** Set by {@link #detach}: the host's messages are for the old mount until its Rversion. */
    private volatile boolean awaitingVersion;

    private WorkspaceRelay(int portFd, int windowFd, int bufferSize) {
        this.portFd = portFd;
        this.windowFd = windowFd;
        this.bufferSize = bufferSize;
    }

    /** Opens the workspace's port (and its read window, if the guest has one) and starts reading it, for the agent's lifetime. */
    static WorkspaceRelay open(int msize) throws IOException, InterruptedException {
        Path device = VirtioPort.find(PORT_NAME, 5_000);
        WorkspaceRelay relay = new WorkspaceRelay(Posix.open(device.toString(), Posix.O_RDWR), openWindow(), msize);
        Thread down = new Thread(relay::hostToKernel, "ws9p-down");
        down.setDaemon(true);
        down.start();
        return relay;
    }

    /** The read window's disk, found by its serial number among the block devices; -1 if there is none. */
    private static int openWindow() {
        try (var disks = Files.list(Path.of("/sys/block"))) {
            for (Path disk : (Iterable<Path>) disks::iterator) {
                Path serial = disk.resolve("serial");
                if (Files.isReadable(serial) && Files.readString(serial).trim().equals(WINDOW_SERIAL)) {
                    int fd = Posix.open("/dev/" + disk.getFileName(), Posix.O_RDONLY | Posix.O_DIRECT);
                    Log.info("workspace relay: large reads come through the read window /dev/" + disk.getFileName());
                    return fd;
                }
            }
        } catch (IOException | RuntimeException e) {
            Log.info("workspace relay: no read window (" + e.getMessage() + "); all data comes through the port");
            return -1;
        }
        Log.info("workspace relay: the guest has no read window; all data comes through the port");
        return -1;
    }

    /** Listens on {@link #SOCKET} for the connection of the mount about to be made, and relays it once made. */
    void listen() throws IOException {
        Files.createDirectories(SOCKET.getParent());
        Files.deleteIfExists(SOCKET);
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(SOCKET));
        synchronized (lock) {
            listening = server;
        }
        Thread t = new Thread(() -> acceptOne(server), "ws9p-accept");
        t.setDaemon(true);
        t.start();
    }

    private void acceptOne(ServerSocketChannel server) {
        try {
            // the kernel makes one connection per mount, for the mount's lifetime
            SocketChannel accepted = server.accept();
            Thread t = new Thread(() -> kernelToHost(accepted), "ws9p-up");
            t.setDaemon(true);
            synchronized (lock) {
                kernel = accepted;
                up = t;
            }
            t.start();
        } catch (IOException e) {
            Log.info("workspace relay: no mount connected (" + e.getMessage() + ")");
        } finally {
            stopListening(server);
        }
    }

    private void stopListening(ServerSocketChannel server) {
        synchronized (lock) {
            if (listening == server) {
                listening = null;
            }
        }
        try {
            server.close();
            Files.deleteIfExists(SOCKET);
        } catch (IOException e) {
            Log.info("workspace relay: " + e.getMessage());
        }
    }

    /**
     * Ends the current mount's connection (and a listener waiting for one):
     * the kernel fails what that mount still waits on with EIO. What the host
     * sends next is dropped up to the next mount's Rversion.
     */
    void detach() {
        SocketChannel k;
        Thread t;
        ServerSocketChannel l;
        synchronized (lock) {
            k = kernel;
            t = up;
            l = listening;
            kernel = null;
            up = null;
            awaitingVersion = true;
        }
        if (l != null) {
            stopListening(l);
        }
        if (k == null) {
            return;
        }
        try {
            k.close();
        } catch (IOException ignored) {
            // closed anyway
        }
        try {
            // it may be writing the old mount's last request to the port: that must not follow the new Tversion
            t.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Passes the kernel's requests to the port, whole messages at a time
     * (the reader of the port writes Treturns between them). After the
     * mount's first message, its Tversion, asks for the read window if
     * there is one.
     */
    private void kernelToHost(SocketChannel from) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(bufferSize, 4096);
            ByteBuffer view = buf.asByteBuffer();
            MemorySegment st = Posix.callState(arena);
            MemorySegment twindow = arena.allocate(7);
            twindow.set(LE_INT, 0, 7);
            twindow.set(ValueLayout.JAVA_BYTE, 4, (byte) TWINDOW);
            twindow.set(LE_SHORT, 5, (short) NOTAG);
            boolean asked = windowFd < 0;
            long have = 0;
            while (true) {
                view.limit(bufferSize).position((int) have);
                int n = from.read(view);
                if (n < 0) {
                    Log.info("workspace relay: the kernel closed its side (unmounted)");
                    return;
                }
                have += n;
                long whole = wholeMessages(buf, have);
                if (whole == 0) {
                    continue;
                }
                synchronized (portLock) {
                    Posix.writeAll(portFd, buf, whole, st);
                    if (!asked) {
                        Posix.writeAll(portFd, twindow, 7, st);
                        asked = true;
                    }
                }
                if (whole < have) {
                    MemorySegment.copy(buf, whole, buf, 0, have - whole);
                }
                have -= whole;
            }
        } catch (IOException | RuntimeException e) {
            Log.info("workspace relay (kernel to host) stopped: " + e.getMessage());
        }
    }

    /**
     * The port hands the guest at most one page per read (virtio-console's
     * receive buffers are pages, and QEMU's chardev moves 4 KiB at a time), so
     * a 1 MiB reply arrives in 256 pieces. Passing each piece on would wake
     * the kernel's 9p reader 256 times; instead whole 9p messages are
     * gathered (the first 4 bytes of each are its size) and written to the
     * kernel in one go. Runs for the agent's lifetime: nothing the host sends
     * or a mount does ends it.
     */
    private void hostToKernel() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(bufferSize, 4096);
            MemorySegment st = Posix.callState(arena);
            Window window = new Window(arena.allocate(bufferSize, 4096), arena.allocate(TRETURN_SIZE),
                    arena.allocate(P9_READ_HEADER), st);
            long have = 0;
            while (true) {
                int n = Posix.readSome(portFd, buf.asSlice(have), bufferSize - have, st);
                if (n < 0) {
                    // no host connected to the port right now: wait for the server to come back; a part
                    // of a message from the one that went away must not be glued to the next one's
                    have = 0;
                    Thread.sleep(20);
                    continue;
                }
                have += n;
                long whole = wholeMessages(buf, have);
                if (whole == 0) {
                    continue;
                }
                deliver(buf, whole, window);
                if (whole < have) {
                    MemorySegment.copy(buf, whole, buf, 0, have - whole);
                }
                have -= whole;
            }
        } catch (RuntimeException e) {
            Log.info("workspace relay (host to kernel) stopped: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** size[4] type[1] tag[2] count[4]: an Rread before its data. */
    private static final int P9_READ_HEADER = 11;

    /** The memory the reader of the port uses for the read window: a slot's data, a Treturn, an Rread's header. */
    private record Window(MemorySegment data, MemorySegment treturn, MemorySegment header, MemorySegment st) {
    }

    /**
     * Writes the first {@code length} bytes of {@code buf} (whole messages)
     * to the current mount, or drops them; an Rreadw among them becomes the
     * Rread it stands for, its slot given back either way.
     */
    private void deliver(MemorySegment buf, long length, Window window) {
        long from = 0;
        if (awaitingVersion) {
            long version = afterStaleReplies(buf, length);
            from = version < 0 ? length : version;
            pass(buf, 0, from, null, window); // answers to the old mount: dropped, but the window's slots go back
            if (version < 0) {
                return;
            }
            awaitingVersion = false;
        }
        SocketChannel to;
        synchronized (lock) {
            to = kernel;
        }
        pass(buf, from, length, to, window);
    }

    /**
     * Writes bytes {@code from} to {@code length} of {@code buf} to {@code to}
     * (or drops them, when null), each Rreadw among them turned into its Rread
     * ({@link #fromWindow}: without a mount, only its slot given back).
     */
    private void pass(MemorySegment buf, long from, long length, SocketChannel to, Window window) {
        long run = from;
        long off = from;
        while (length - off >= 7) {
            long size = Integer.toUnsignedLong(buf.get(LE_INT, off));
            if (size < 7 || off + size > length) {
                break; // not framed as 9p: passed on as it is below
            }
            if ((buf.get(ValueLayout.JAVA_BYTE, off + 4) & 0xff) == RREADW && size == RREADW_SIZE) {
                write(to, buf.asSlice(run, off - run).asByteBuffer());
                fromWindow(buf.asSlice(off, size), to, window);
                run = off + size;
            }
            off += size;
        }
        write(to, buf.asSlice(run, length - run).asByteBuffer());
    }

    /**
     * Reads an Rreadw's data from its slot of the window, gives the slot
     * back, and writes the kernel the Rread (or, if the window cannot be
     * read, an Rlerror EIO for that tag: the kernel's read fails, nothing
     * hangs).
     */
    private void fromWindow(MemorySegment m, SocketChannel to, Window window) {
        int tag = m.get(LE_SHORT, 5) & 0xffff;
        long count = Integer.toUnsignedLong(m.get(LE_INT, 7));
        long slot = Integer.toUnsignedLong(m.get(LE_INT, 11));
        boolean read = false;
        if (to != null && windowFd >= 0 && count <= Math.min(window.data().byteSize(), WINDOW_SLOT)) {
            try {
                long sectors = (count + SECTOR - 1) / SECTOR * SECTOR;
                Posix.preadFully(windowFd, window.data(), sectors, slot * WINDOW_SLOT, window.st());
                read = true;
            } catch (RuntimeException e) {
                if (windowFailures++ == 0) {
                    Log.info("workspace relay: cannot read the read window (" + e.getMessage() + "); the read fails");
                }
            }
        }
        giveBack(m, window);
        if (to == null) {
            return;
        }
        MemorySegment h = window.header();
        h.set(LE_SHORT, 5, (short) tag);
        if (read) {
            h.set(LE_INT, 0, (int) (P9_READ_HEADER + count));
            h.set(ValueLayout.JAVA_BYTE, 4, (byte) RREAD);
            h.set(LE_INT, 7, (int) count);
            write(to, h.asByteBuffer(), window.data().asSlice(0, count).asByteBuffer());
        } else {
            h.set(LE_INT, 0, P9_READ_HEADER);
            h.set(ValueLayout.JAVA_BYTE, 4, (byte) RLERROR);
            h.set(LE_INT, 7, Posix.EIO);
            write(to, h.asByteBuffer());
        }
    }

    /** Treturn: the slot of Rreadw {@code m} may be written again. */
    private void giveBack(MemorySegment m, Window window) {
        MemorySegment r = window.treturn();
        r.set(LE_INT, 0, TRETURN_SIZE);
        r.set(ValueLayout.JAVA_BYTE, 4, (byte) TRETURN);
        r.set(LE_SHORT, 5, (short) NOTAG);
        r.set(LE_INT, 7, m.get(LE_INT, 11));
        r.set(LE_INT, 11, m.get(LE_INT, 15));
        synchronized (portLock) {
            Posix.writeAll(portFd, r, TRETURN_SIZE, window.st());
        }
    }

    /** Writes to the current mount's connection; nothing when there is none, or it is gone. */
    private static void write(SocketChannel to, ByteBuffer... parts) {
        if (to == null) {
            return;
        }
        try {
            long left = 0;
            for (ByteBuffer p : parts) {
                left += p.remaining();
            }
            while (left > 0) {
                left -= to.write(parts);
            }
        } catch (IOException e) {
            Log.info("workspace relay: the mount's connection is gone (" + e.getMessage() + ")");
        }
    }

    /** Where the first Rversion starts among the whole messages of {@code buf}, or -1 if none is there. */
    private static long afterStaleReplies(MemorySegment buf, long length) {
        long off = 0;
        while (length - off >= 7) {
            long size = Integer.toUnsignedLong(buf.get(LE_INT, off));
            if (size < 7 || off + size > length) {
                return -1; // unframed bytes: not an answer to anything the new mount asked
            }
            if ((buf.get(ValueLayout.JAVA_BYTE, off + 4) & 0xff) == RVERSION
                    && (buf.get(LE_SHORT, off + 5) & 0xffff) == NOTAG) {
                return off;
            }
            off += size;
        }
        return -1;
    }

    /**
     * How many leading bytes of {@code buf} are whole 9p messages. A size
     * field that cannot be 9p (below a header, or larger than the buffer)
     * means the stream is not framed as expected: everything is passed on
     * as it is, and the kernel's client decides.
     */
    private long wholeMessages(MemorySegment buf, long have) {
        long off = 0;
        while (have - off >= 4) {
            long size = Integer.toUnsignedLong(buf.get(LE_INT, off));
            if (size < 7 || size > bufferSize) {
                return have;
            }
            if (have - off < size) {
                break;
            }
            off += size;
        }
        return off;
    }
}
