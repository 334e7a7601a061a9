package dev.kosa8.egress;

import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A template's network link, for moving bytes through it before the template is saved: a
 * {@link GuestLink} like a sandbox's, whose HTTP listener answers every request with {@code bytes} zero bytes and
 * whose other listeners are absent (a stream to them is reset). No broker, no policy, nothing leaves the host:
 * the template's guest is the image's own init and kosa8's agent, with no user code, and the link is closed before
 * the machine is saved.
 *
 * <p>Why: every sandbox starts from its template's saved RAM, the agent's JVM included. An agent that has carried
 * a few hundred megabytes has compiled its network path; one that has not interprets it and compiles it during the
 * sandbox's first download, which under TCG ran at half the speed of later ones (docs/network.md, "Throughput").
 */
public final class NetRehearsal implements AutoCloseable {
    private final long bytes;
    private final Path dir;
    private final AtomicLong served = new AtomicLong();
    private Channel server;
    private GuestLink link;

    private NetRehearsal(Path dir, long bytes) {
        this.dir = dir;
        this.bytes = bytes;
    }

    /**
     * Listens in {@code dir} (made private to the user) and joins the machine's network port, as
     * {@link Broker#attach} does for a sandbox.
     */
    static NetRehearsal start(Path dir, long bytes, Path netSocket, Path netWindow, EventLoopGroup group,
                              Consumer<String> log) {
        NetRehearsal r = new NetRehearsal(dir, bytes);
        try {
            HostPaths.privateDirectory(dir);
            Path socket = dir.resolve(Listener.HTTP.socketName());
            r.server = Broker.listen(group, socket, new ZeroAnswer(bytes, r.served));
            r.link = GuestLink.connect(new GuestLink.Ends(l -> l == Listener.HTTP ? socket : null, l -> { }),
                    netSocket, netWindow, group, m -> log.accept("network rehearsal: " + m));
            return r;
        } catch (IOException | RuntimeException e) {
            r.close();
            throw new KosaException(KosaException.Kind.HOST, "cannot start a template's network rehearsal in " + dir
                    + ": " + e.getMessage(), "check that " + dir + " is writable", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            r.close();
            throw new KosaException(KosaException.Kind.HOST, "interrupted while starting a network rehearsal", "", e);
        }
    }

    /** Whether the agent answered the link's Hello within {@code timeout}. */
    public boolean awaitLinked(Duration timeout) {
        return link.answeredWithin(timeout);
    }

    /** What a program in the guest fetches: the HTTP listener's address, as the guest reaches it. */
    public String url() {
        return "http://" + Listener.GUEST_ADDRESS + "/";
    }

    /** The body bytes handed to the link so far, over every request. */
    public long served() {
        return served.get();
    }

    @Override
    public void close() {
        if (link != null) {
            link.close();
        }
        if (server != null) {
            server.close().awaitUninterruptibly(2000);
        }
        try {
            Files.deleteIfExists(dir.resolve(Listener.HTTP.socketName()));
        } catch (IOException ignored) {
            // the template's runtime directory goes as a whole
        }
    }
}
