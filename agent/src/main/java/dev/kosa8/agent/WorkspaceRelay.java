package dev.kosa8.agent;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
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
 * <p>When the host side goes away (the daemon restarts), reads of the port
 * see end of file until a new server connects; the relay waits for it rather
 * than failing the mount.
 */
final class WorkspaceRelay {
    static final String PORT_NAME = "dev.kosa8.ws9p";
    static final Path SOCKET = Path.of("/run/kosa8/ws9p.sock");

    private final int portFd;
    private final ServerSocketChannel server;
    private final int bufferSize;

    private WorkspaceRelay(int portFd, ServerSocketChannel server, int bufferSize) {
        this.portFd = portFd;
        this.server = server;
        this.bufferSize = bufferSize;
    }

    /** Opens the port, listens on {@link #SOCKET}, and relays the first connection in background threads. */
    static WorkspaceRelay start(int msize) throws IOException, InterruptedException {
        Path device = VirtioPort.find(PORT_NAME, 5_000);
        int fd = Posix.open(device.toString(), Posix.O_RDWR);
        Files.createDirectories(SOCKET.getParent());
        Files.deleteIfExists(SOCKET);
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(SOCKET));
        WorkspaceRelay relay = new WorkspaceRelay(fd, server, msize);
        Thread t = new Thread(relay::acceptAndRelay, "ws9p-accept");
        t.setDaemon(true);
        t.start();
        return relay;
    }

    /** Gives the port and the socket back: for a mount that failed, so that a retry can start afresh. */
    void close() {
        try {
            server.close();
            Files.deleteIfExists(SOCKET);
        } catch (IOException e) {
            Log.info("workspace relay: " + e.getMessage());
        }
        Posix.close(portFd);
    }

    private void acceptAndRelay() {
        try {
            // the kernel makes one connection per mount, for the mount's lifetime
            SocketChannel kernel = server.accept();
            server.close();
            Files.deleteIfExists(SOCKET);
            Thread up = new Thread(() -> kernelToHost(kernel), "ws9p-up");
            Thread down = new Thread(() -> hostToKernel(kernel), "ws9p-down");
            up.setDaemon(true);
            down.setDaemon(true);
            up.start();
            down.start();
        } catch (IOException e) {
            Log.info("workspace relay: " + e.getMessage());
        }
    }

    private void kernelToHost(SocketChannel kernel) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(bufferSize, 4096);
            ByteBuffer view = buf.asByteBuffer();
            MemorySegment st = Posix.callState(arena);
            while (true) {
                view.clear();
                int n = kernel.read(view);
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
     * kernel in one go.
     */
    private void hostToKernel(SocketChannel kernel) {
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
                ByteBuffer view = buf.asSlice(0, whole).asByteBuffer();
                while (view.hasRemaining()) {
                    kernel.write(view);
                }
                if (whole < have) {
                    MemorySegment.copy(buf, whole, buf, 0, have - whole);
                }
                have -= whole;
            }
        } catch (IOException | RuntimeException e) {
            Log.info("workspace relay (host to kernel) stopped: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
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

    private static final java.lang.foreign.ValueLayout.OfInt LE_INT =
            java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
}
