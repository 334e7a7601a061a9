package dev.kosa8.egress;

import dev.kosa8.host.HostPaths;
import dev.kosa8.protocol.NetLink;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The daemon's side of the network path, compiled before a sandbox needs it: a daemon just started interprets its
 * link and its broker's HTTP path during a sandbox's first download, and its compiles take the CPUs that download
 * runs on (docs/network.md, "Throughput"). Once after the daemon starts, this moves downloads through exactly that
 * path: a {@link Broker} of its own (a policy that allows one reserved name, whose one address exception lets it
 * be dialed at a loopback server in the daemon answering zeros: {@link ZeroAnswer}), joined by a {@link GuestLink}
 * with a network window to a {@link StandInAgent} on a socket where QEMU's port would be. No sandbox, no guest and
 * nothing outside the host takes part; every socket and file is in a private directory removed at the end.
 */
final class LinkWarmUp {
    /** The name fetched: under {@code .invalid}, which no resolver answers, and the only name the policy allows. */
    static final String NAME = "warm-up.kosa8.invalid";

    /** How long a whole warm-up may take before its stand-in agent is closed under it. */
    static final Duration LIMIT = Duration.ofMinutes(2);

    private LinkWarmUp() {
    }

    /** What a warm-up moved, and how long it took. */
    record Moved(int downloads, long bytes, Duration took) {
    }

    /**
     * Runs {@code downloads} of {@code bytes} each through a broker and link made in {@code dir} (made private, then
     * removed) on {@code group}.
     */
    static Moved run(Path dir, int downloads, long bytes, EventLoopGroup group, Consumer<String> log)
            throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        HostPaths.privateDirectory(dir);
        AtomicLong served = new AtomicLong();
        Channel upstream = new ServerBootstrap().group(group).channel(EpollServerSocketChannel.class)
                .childHandler(new ZeroAnswer(bytes, served))
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)).sync().channel();
        Broker broker = null;
        long moved = 0;
        int done = 0;
        try {
            int port = ((InetSocketAddress) upstream.localAddress()).getPort();
            EgressPolicy policy = new EgressPolicy(false, List.of(AllowRule.parse(NAME + ":" + port)),
                    new AddressExceptions(List.of(AddressException.parse(NAME, List.of("127.0.0.1/32")))));
            Upstreams upstreams = new Upstreams(host -> {
                if (!host.equals(NAME)) {
                    throw new java.net.UnknownHostException(host);
                }
                return new InetAddress[] {InetAddress.getLoopbackAddress()};
            }, EgressTestSettings.NONE);
            broker = Broker.start("warm-up", dir.resolve("net"), policy, new AuditLog(dir.resolve("net.log"),
                    m -> { }), upstreams, null, dev.kosa8.egress.tls.UpstreamTls.clientContext(Optional.empty()),
                    group);
            Path window = dir.resolve("net.window");
            try (RandomAccessFile f = new RandomAccessFile(window.toFile(), "rw")) {
                f.setLength(NetLink.WINDOW_BYTES);
            }
            Path socket = dir.resolve("net.sock");
            try (StandInAgent agent = StandInAgent.listen(socket)) {
                // a link that stops answering would hold the stand-in's read for ever: closed under it at the limit
                var alarm = group.next().schedule(() -> {
                    try {
                        agent.close();
                    } catch (IOException ignored) {
                        // closed already
                    }
                }, LIMIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
                broker.attach(socket, window, m -> log.accept("warm-up: " + m));
                agent.answer();
                String request = "GET http://" + NAME + ":" + port + "/ HTTP/1.1\r\nHost: " + NAME + ":" + port
                        + "\r\nConnection: close\r\n\r\n";
                try {
                    for (; done < downloads; done++) {
                        moved += agent.fetch(Listener.PROXY.guestPort(), request);
                    }
                } finally {
                    alarm.cancel(false);
                }
            }
        } finally {
            if (broker != null) {
                broker.close();
            }
            upstream.close().sync();
            deleteTree(dir);
        }
        if (served.get() != (long) downloads * bytes) {
            throw new IOException("the upstream served " + served.get() + " bytes of " + (long) downloads * bytes);
        }
        return new Moved(done, moved, Duration.ofNanos(System.nanoTime() - t0));
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (var walk = Files.walk(p)) {
            for (Path f : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        }
    }
}
