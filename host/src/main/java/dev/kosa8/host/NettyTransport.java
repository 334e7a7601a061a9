package dev.kosa8.host;

import io.netty.channel.Channel;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The Netty transport the daemon's sockets use (its API, the network broker and its link to the guest): Linux's
 * epoll where it is there, else the JDK's NIO, which has unix domain sockets since Java 16 and runs on macOS
 * (docs/design.md, "The host layer"). One choice a process, made at its start.
 *
 * <p>Not yet taken on Linux under {@code KOSA8_HOST_PROFILE=portable}: with NIO, two of the link's tests about a
 * stream's end fail (the broker connection of a stream whose link ended stays open; the rest of an answer held
 * once the broker ended is not sent on), so the portable profile keeps epoll until they pass.
 */
public enum NettyTransport {
    EPOLL, NIO;

    /** This process's transport. */
    public static final NettyTransport CURRENT = choose(System.getProperty("os.name", ""), isEpollAvailable());

    /** Epoll on Linux where Netty's native library loads; NIO elsewhere. */
    static NettyTransport choose(String osName, boolean epoll) {
        return osName.toLowerCase(Locale.ROOT).equals("linux") && epoll ? EPOLL : NIO;
    }

    private static boolean isEpollAvailable() {
        try {
            return Epoll.isAvailable();
        } catch (LinkageError e) {
            return false; // no native library for this OS or architecture
        }
    }

    /** The event loops' I/O handler. */
    public IoHandlerFactory ioHandler() {
        return this == EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    }

    /** A listening unix socket's channel. */
    public Class<? extends ServerChannel> serverDomainSocket() {
        return this == EPOLL ? EpollServerDomainSocketChannel.class : NioServerDomainSocketChannel.class;
    }

    /** A unix socket connection's channel. */
    public Class<? extends Channel> domainSocket() {
        return this == EPOLL ? EpollDomainSocketChannel.class : NioDomainSocketChannel.class;
    }

    /** A TCP connection's channel. */
    public Class<? extends Channel> tcpSocket() {
        return this == EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    /** The address of the unix socket at {@code path}, as this transport's channels take it. */
    public SocketAddress domainAddress(Path path) {
        return this == EPOLL ? new DomainSocketAddress(path.toString()) : UnixDomainSocketAddress.of(path);
    }
}
