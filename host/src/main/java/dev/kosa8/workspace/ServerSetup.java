package dev.kosa8.workspace;

import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * What a {@link WorkspaceServer} needs before it serves, and lets go of when it closes: the
 * workspace port's socket connected, the read and write windows opened, the daemon's own uid and
 * umask (which {@link P9Operations} maps ownership and modes by), and descriptors closed quietly.
 */
final class ServerSetup {
    private ServerSetup() {
    }

    static ReadWindow openWindow(Path window) {
        try {
            return ReadWindow.open(window);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.VM, "cannot open the workspace's read window " + window + ": "
                    + e.getMessage(), "see `kosa8 logs ID`");
        }
    }

    /**
     * The write window, or null without one. A sandbox whose QEMU a daemon from before the write window
     * started has none (a new daemon re-attaching to it after an upgrade): its agent, as old, never sends
     * a Twritew, and the server serves it without.
     */
    static WriteWindow openWrites(Path writes, Consumer<String> log) {
        if (writes != null && !Files.exists(writes)) {
            log.accept("no write window at " + writes + " (a QEMU started before there was one); large writes come"
                    + " through the port");
            return null;
        }
        try {
            return WriteWindow.open(writes);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.VM, "cannot open the workspace's write window " + writes + ": "
                    + e.getMessage(), "see `kosa8 logs ID`");
        }
    }

    static SocketChannel connect(Path socket, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
                try {
                    ch.connect(UnixDomainSocketAddress.of(socket));
                    return ch;
                } catch (IOException e) {
                    ch.close();
                    throw e;
                }
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    throw new KosaException(KosaException.Kind.VM, "cannot connect to the workspace port at "
                            + socket + ": " + e.getMessage(), "see `kosa8 logs ID`");
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new KosaException(KosaException.Kind.VM, "interrupted", "");
                }
            }
        }
    }

    static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }


    static int ownerUid() {
        return statusField("Uid:", 10);
    }

    static int umask() {
        int u = statusField("Umask:", 8);
        return u < 0 ? 022 : u;
    }

    /** A field of /proc/self/status: the daemon's own uid and umask, without a native call. */
    private static int statusField(String name, int radix) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith(name)) {
                    return Integer.parseInt(line.substring(name.length()).trim().split("\\s+")[0], radix);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // fall through
        }
        return -1;
    }
}
