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

    private void hostToKernel(SocketChannel kernel) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(bufferSize, 4096);
            MemorySegment st = Posix.callState(arena);
            while (true) {
                int n = Posix.readSome(portFd, buf, bufferSize, st);
                if (n < 0) {
                    // no host connected to the port right now: wait for the server to come back
                    Thread.sleep(20);
                    continue;
                }
                ByteBuffer view = buf.asSlice(0, n).asByteBuffer();
                while (view.hasRemaining()) {
                    kernel.write(view);
                }
            }
        } catch (IOException | RuntimeException e) {
            Log.info("workspace relay (host to kernel) stopped: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
