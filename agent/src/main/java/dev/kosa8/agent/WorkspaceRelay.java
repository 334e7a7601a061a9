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
 */
final class WorkspaceRelay {
    static final String PORT_NAME = "dev.kosa8.ws9p";
    static final Path SOCKET = Path.of("/run/kosa8/ws9p.sock");
    private static final int RVERSION = 101;
    private static final int NOTAG = 0xffff;
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort LE_SHORT =
            ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final int portFd;
    private final int bufferSize;
    private final Object lock = new Object();
    /** The current mount's connection; null between mounts. Guarded by {@link #lock}. */
    private SocketChannel kernel;
    private Thread up;
    private ServerSocketChannel listening;
    /** Set by {@link #detach}: the host's messages are for the old mount until its Rversion. */
    private volatile boolean awaitingVersion;

    private WorkspaceRelay(int portFd, int bufferSize) {
        this.portFd = portFd;
        this.bufferSize = bufferSize;
    }

    /** Opens the workspace's port and starts reading it, for the agent's lifetime. */
    static WorkspaceRelay open(int msize) throws IOException, InterruptedException {
        Path device = VirtioPort.find(PORT_NAME, 5_000);
        WorkspaceRelay relay = new WorkspaceRelay(Posix.open(device.toString(), Posix.O_RDWR), msize);
        Thread down = new Thread(relay::hostToKernel, "ws9p-down");
        down.setDaemon(true);
        down.start();
        return relay;
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

    private void kernelToHost(SocketChannel from) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(bufferSize, 4096);
            ByteBuffer view = buf.asByteBuffer();
            MemorySegment st = Posix.callState(arena);
            while (true) {
                view.clear();
                int n = from.read(view);
                if (n < 0) {
                    Log.info("workspace relay: the kernel closed its side (unmounted)");
                    return;
                }
                Posix.writeAll(portFd, buf, n, st);
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
                deliver(buf, whole);
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

    /** Writes the first {@code length} bytes of {@code buf} to the current mount, or drops them. */
    private void deliver(MemorySegment buf, long length) {
        long from = 0;
        if (awaitingVersion) {
            from = afterStaleReplies(buf, length);
            if (from < 0) {
                return;
            }
            awaitingVersion = false;
        }
        SocketChannel to;
        synchronized (lock) {
            to = kernel;
        }
        if (to == null) {
            return; // between mounts: answers to a mount that is gone
        }
        ByteBuffer view = buf.asSlice(from, length - from).asByteBuffer();
        try {
            while (view.hasRemaining()) {
                to.write(view);
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
