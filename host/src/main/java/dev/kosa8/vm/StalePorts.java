package dev.kosa8.vm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/** The virtio-serial ports of a machine found stopped by a restarted daemon, closed once it runs ({@link Vm#reattach}). */
final class StalePorts {
    private StalePorts() {
    }

    /**
     * For a machine that was stopped when its daemon died: QEMU passes no chardev open or close to a stopped
     * machine's virtio-serial ports, so its ports still count the dead daemon's connections as open. A guest
     * write to such a port before this daemon connects it (the folder's port is written by any guest process
     * using the folder, or by the guest kernel's write-back, from the {@code cont} on) fails on the closed
     * socket, and QEMU throttles the port until the socket takes data again, a wait on a socket it no longer
     * has: nothing the guest sends there reaches a daemon again (the new connection's open finds the port
     * already open and changes nothing), and a folder mounted afresh waits forever for its Rversion. Each
     * port's socket is connected and closed once, now that the machine runs: QEMU closes the port as it does
     * when a daemon goes while the machine runs (what the guest sent meanwhile is dropped, the throttle
     * lifted), and the connections made next open it.
     */
    static void close(VmSpec spec) {
        for (Path socket : new Path[] {spec.agentSocket(), spec.workspaceSocket(), spec.netSocket()}) {
            try {
                // a socket QEMU made, not a link the jailed QEMU (which can write the machine folder) put there
                if (socket == null || !Files.readAttributes(socket, java.nio.file.attribute.BasicFileAttributes.class,
                        java.nio.file.LinkOption.NOFOLLOW_LINKS).isOther()) {
                    continue;
                }
            } catch (IOException e) {
                continue; // not there: nothing to close
            }
            try (var ch = java.nio.channels.SocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
                ch.configureBlocking(false);
                long deadline = System.nanoTime() + Duration.ofSeconds(2).toNanos();
                boolean connected = ch.connect(java.net.UnixDomainSocketAddress.of(socket));
                while (!connected && System.nanoTime() < deadline) { // a listener whose queue is full: not for ever
                    Thread.sleep(5);
                    connected = ch.finishConnect();
                }
            } catch (IOException e) {
                // nothing listens there: nothing to close
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
