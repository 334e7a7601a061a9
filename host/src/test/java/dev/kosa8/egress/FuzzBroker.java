package dev.kosa8.egress;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * A broker for a fuzz test that feeds its pipelines directly: a temporary directory and an event loop of its own,
 * and upstreams whose every name fails to resolve, so nothing the fuzzer sends is ever carried on. Closing it stops
 * the broker and its event loop and deletes the directory.
 *
 * @param dir    the broker's directory: its sockets under {@code run}, its audit log {@code net.log}
 * @param group  the event loop it runs on
 * @param broker the broker
 */
record FuzzBroker(Path dir, EventLoopGroup group, Broker broker) implements AutoCloseable {

    /** @param auditFailures told when the audit log cannot be written */
    static FuzzBroker start(String sandboxId, EgressPolicy policy, Consumer<String> auditFailures) throws Exception {
        Path dir = Files.createTempDirectory(sandboxId);
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, dev.kosa8.host.NettyTransport.CURRENT.ioHandler());
        Broker broker = Broker.start(sandboxId, dir.resolve("run"), policy,
                new AuditLog(dir.resolve("net.log"), auditFailures), new Upstreams(h -> {
                    throw new UnknownHostException(h);
                }, EgressTestSettings.NONE), null, null, group);
        return new FuzzBroker(dir, group, broker);
    }

    @Override
    public void close() throws Exception {
        broker.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
