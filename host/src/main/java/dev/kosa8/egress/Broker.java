package dev.kosa8.egress;

import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.NetLink;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.dns.TcpDnsQueryDecoder;
import io.netty.handler.codec.dns.TcpDnsResponseEncoder;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.timeout.ReadTimeoutHandler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * One sandbox's egress broker: four listeners on unix sockets in the
 * sandbox's private runtime directory (the network link, {@link GuestLink},
 * joins each guest connection to the guest's 10.0.2.100 ports to one of
 * them), the sandbox's policy, which can be swapped while it runs, and its
 * audit log. All brokers share the daemon's event loops.
 */
public final class Broker implements AutoCloseable {
    static final int CONNECT_TIMEOUT_MILLIS = 10_000;
    /**
     * Largest request body the broker holds in memory while it judges the request; a longer one waits on disk
     * ({@link BodySpool}, within {@link SpoolLimits}).
     */
    static final int MAX_BODY = 8 << 20;
    /**
     * A guest connection that sends no complete request (or DNS query) for this long, with none in flight, is
     * closed; tunnels and relayed TLS are not (a long download or an idle keep-alive tunnel is normal).
     */
    static final int IDLE_SECONDS = 60;
    /**
     * Open guest connections per sandbox. Each costs buffers in the daemon (up to one window each way on the
     * network link, {@link GuestLink}, and the socket's), and the guest chooses how many it opens: the link
     * refuses streams beyond it, as the broker refuses connections. (It was 256 when each also cost a relay
     * process on the host; the number is kept.)
     */
    static final int MAX_CONNECTIONS = NetLink.MAX_STREAMS;
    /**
     * Open DNS connections per sandbox, counted apart from {@link #MAX_CONNECTIONS}: a sandbox that holds every
     * connection it may still resolves names, so its programs see their connection refused, not a failed lookup.
     */
    static final int DNS_CONNECTIONS = NetLink.DNS_STREAMS;
    /**
     * Send buffer of each guest connection's unix socket, the way downloads leave the broker: half of
     * {@link NetLink#WINDOW}, which the kernel doubles to 256 KiB. The daemon's end of the link reads these sockets
     * only as far as the guest's window allows, except that once the broker has ended a connection Netty reads its
     * socket to the end, into the daemon's heap: this buffer is what bounds that, to 256 KiB per stream (64 MiB
     * with all {@link #MAX_CONNECTIONS} of a guest that does not read; docs/network.md), whatever the window
     * towards the guest has grown to ({@link NetLink#DOWN_WINDOW}).
     * <p>
     * It was 1 MiB while a socat relay per connection read the other end (on another core, in another process):
     * Linux's default (208 KiB here) made the event loop fill the socket and park again for every few TLS records,
     * and 1 MiB took intercepted downloads on the host from 0.66–0.76x of direct to 0.84–0.96x
     * (bench/history/egress.md, run 9). No relay reads it now; the guest's downloads are measured through real
     * guests (bench/egress.sh --guest).
     */
    static final int GUEST_SEND_BUFFER = NetLink.WINDOW / 2;

    private final String sandboxId;
    private final AuditLog audit;
    private final Upstreams upstreams;
    private final dev.kosa8.egress.tls.SandboxCa ca;
    private final io.netty.handler.ssl.SslContext upstreamTls;
    /** The same checks offering ALPN {@code h2, http/1.1}; null: the upstream leg speaks HTTP/1.1 only. */
    private volatile io.netty.handler.ssl.SslContext upstreamHttp2;
    /**
     * HTTP/2 upstream connections a sandbox may hold at once. Each lets its server send up to
     * {@code UpstreamHttp2.CONNECTION_WINDOW} (16 MiB) ahead of a guest that does not read; with one per guest
     * connection (256) that would be 4 GiB a sandbox. Past the bound a request's upstream leg speaks HTTP/1.1,
     * which reads only as the guest takes: 8 × 16 MiB = 128 MiB at most, the guest side's own bound.
     */
    static final int MAX_HTTP2_UPSTREAMS = 8;
    private final java.util.concurrent.Semaphore http2Upstreams = new java.util.concurrent.Semaphore(MAX_HTTP2_UPSTREAMS);
    private final Map<Listener, Path> sockets = new EnumMap<>(Listener.class);
    private final List<Channel> servers = new ArrayList<>();
    private final CarriedConnections carried = new CarriedConnections();
    private volatile EgressPolicy policy;
    /** The sandbox's {@code kosa8 secret}s, as the daemon last gave them. */
    private volatile SecretBindings granted = SecretBindings.NONE;
    /** {@link #granted} and the tokens of logins made inside ({@link #logins}): what every request is judged by. */
    private volatile SecretBindings secrets = SecretBindings.NONE;
    private volatile OAuthLogins logins = new OAuthLogins(dev.kosa8.secrets.OAuthProviders.builtIn(), OAuthKeeper.NONE,
            this::rebind);
    private volatile QueryRate dnsRate;
    /** Request bodies too long for memory, on disk while they are judged ({@link BodySpool}). */
    private final SpoolBudget spool;
    /** The open guest connections, each listener's within its cap. */
    private final GuestConnections connections;
    private EventLoopGroup group;
    private GuestLink link;
    private boolean closed;

    private Broker(String sandboxId, EgressPolicy policy, AuditLog audit, Upstreams upstreams,
                   dev.kosa8.egress.tls.SandboxCa ca, io.netty.handler.ssl.SslContext upstreamTls) {
        this.sandboxId = sandboxId;
        this.ca = ca;
        this.upstreamTls = upstreamTls;
        this.policy = policy;
        this.audit = audit;
        this.upstreams = upstreams;
        this.spool = new SpoolBudget(null);
        this.connections = new GuestConnections(audit);
    }

    /**
     * Starts listening on {@code dir/<listener>.sock}, in a directory private to the user.
     *
     * @param ca          the sandbox's CA, for intercepting TLS; null: hosts that need interception are refused
     * @param upstreamTls how intercepted requests verify their upstream ({@code UpstreamTls.clientContext})
     */
    public static Broker start(String sandboxId, Path dir, EgressPolicy policy, AuditLog audit, Upstreams upstreams,
                               dev.kosa8.egress.tls.SandboxCa ca, io.netty.handler.ssl.SslContext upstreamTls,
                               EventLoopGroup group) {
        Broker b = new Broker(sandboxId, policy, audit, upstreams, ca, upstreamTls);
        b.group = group;
        b.spool.dir(dir.resolve("bodies"));
        try {
            HostPaths.privateDirectory(dir);
            for (Listener l : Listener.values()) {
                Path socket = dir.resolve(l.socketName());
                b.servers.add(listen(group, socket, b.pipelineFor(l)));
                b.sockets.put(l, socket);
            }
            return b;
        } catch (IOException | RuntimeException e) {
            b.close();
            throw new KosaException(KosaException.Kind.HOST, "cannot start the network broker of sandbox " + sandboxId
                    + ": " + e.getMessage(), "check that " + dir + " is writable", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            b.close();
            throw new KosaException(KosaException.Kind.HOST, "interrupted while starting the network broker", "", e);
        }
    }

    /**
     * Listens on the unix socket {@code socket} (one left there before is replaced) for the network link's streams,
     * each served by {@code handler}, as a broker's listener does: the socket the user's alone, each connection's
     * send buffer {@link #GUEST_SEND_BUFFER}. Also a template's rehearsal listener ({@link NetRehearsal}).
     */
    static Channel listen(EventLoopGroup group, Path socket, ChannelHandler handler)
            throws IOException, InterruptedException {
        Files.deleteIfExists(socket);
        Channel server = new ServerBootstrap().group(group).channel(dev.kosa8.host.NettyTransport.CURRENT.serverDomainSocket())
                .childOption(io.netty.channel.ChannelOption.SO_SNDBUF, GUEST_SEND_BUFFER)
                .childHandler(handler)
                .bind(dev.kosa8.host.NettyTransport.CURRENT.domainAddress(socket)).sync().channel();
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
        return server;
    }

    /**
     * The bytes of the request bodies this broker holds on disk now while it judges them ({@link BodySpool}): they
     * count in the sandbox's disk budget (the daemon's DiskUsage), since no listing of the sandbox's folder sees
     * them (each spool file is unlinked as it is made).
     */
    public long spooledBytes() {
        return spool.used();
    }

    /** Where request bodies too long for memory wait while they are judged, and how much of them: {@link BodySpool}. */
    SpoolBudget spool() {
        return spool;
    }

    /**
     * Keeps the request bodies too long for memory in {@code dir} (made private to the user) instead of the runtime
     * directory, which is often a tmpfs, that is memory again ({@link EgressService} gives the sandbox's own
     * directory).
     */
    public void spoolIn(Path dir) {
        spool.dir(dir);
    }

    /** The send buffer of each open guest connection, as the kernel reports it (one closing meanwhile is left out). */
    List<Integer> guestSendBuffers() {
        return connections.sendBuffers();
    }

    private ChannelHandler pipelineFor(Listener l) {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                if (!connections.admit(l, ch)) {
                    return;
                }
                var p = ch.pipeline();
                switch (l) {
                    case DNS -> {
                        p.addLast(new ReadTimeoutHandler(IDLE_SECONDS));
                        p.addLast(dnsDecoder());
                        p.addLast(new TcpDnsResponseEncoder());
                        p.addLast(new DnsAnswerer(Broker.this));
                    }
                    case TLS -> p.addLast(new TlsRouter(Broker.this, l, null, 443));
                    case HTTP, PROXY -> {
                        p.addLast(HttpEntry.IDLE, new io.netty.handler.timeout.IdleStateHandler(IDLE_SECONDS, 0, 0));
                        p.addLast(new StrictRequestDecoder());
                        p.addLast(new HttpResponseEncoder());
                        p.addLast(new HeadGate(Broker.this, l, null, -1));
                        p.addLast(new BodySpool(Broker.this, l, null, -1));
                        p.addLast(new HttpEntry(Broker.this, l));
                    }
                }
            }
        };
    }

    /**
     * Joins the broker to the network port of the sandbox's machine, the unix socket QEMU keeps behind it
     * ({@link GuestLink}): called whenever a machine starts or replaces the one before (a boot, a restore, a
     * daemon's re-attach). The link to the machine before, if any, ends, and its streams with it.
     *
     * @param netWindow the machine's network window file ({@code VmSpec.netWindow()}), or null to send every byte
     *                  through the port
     */
    public synchronized GuestLink attach(Path netSocket, Path netWindow, java.util.function.Consumer<String> log) {
        if (link != null) {
            link.close();
        }
        link = closed ? null : GuestLink.connect(new GuestLink.Ends(sockets::get, connections::refuseOverCap),
                netSocket, netWindow, group, log);
        return link;
    }

    /**
     * Waits until the agent of the machine last attached has answered the network link's Hello, so the guest's
     * first connections find a session instead of a reset. False when it did not within {@code timeout} (the
     * link says why in the daemon's log), or when nothing is attached.
     */
    public boolean awaitLinked(java.time.Duration timeout) {
        GuestLink l;
        synchronized (this) {
            l = link;
        }
        return l != null && l.answeredWithin(timeout);
    }

    /** The DNS listener's query decoder; tests model the broker with the same one. */
    static TcpDnsQueryDecoder dnsDecoder() {
        return new TcpDnsQueryDecoder();
    }

    /**
     * Remembers a carried connection until it closes, so that a policy change
     * that no longer allows its host ends it at once.
     */
    void track(String host, int port, Channel guest) {
        track(host, port, guest, false);
    }

    /** @param passedThrough TLS relayed unread, which a newly bound key cannot reach */
    void track(String host, int port, Channel guest, boolean passedThrough) {
        carried.add(host, port, guest, passedThrough);
        if (!policy.connect(host, port).allowed()) {
            guest.close(); // the policy changed while this connection was being set up
        }
    }

    public String sandboxId() {
        return sandboxId;
    }

    public EgressPolicy policy() {
        return policy;
    }

    /** Takes effect at once: for new connections and queries, and by closing carried connections it no longer allows. */
    public void policy(EgressPolicy next) {
        policy = next;
        carried.closeDisallowed(next);
    }

    /**
     * The policy's decision on a connection, with the sandbox's secrets: TLS
     * to a host a secret is bound to is always intercepted, since its key goes
     * into the requests inside (under {@code --net open} too, and over a
     * {@code passthrough} rule for the host); so is TLS to an OAuth token
     * endpoint's host ({@link OAuthLogins}), whose responses carry tokens.
     */
    Decision connect(String host, int port) {
        Decision d = policy.connect(host, port);
        if (d.allowed() && d.passthrough() && logins.providers().isTokenHost(host, port)) {
            // a login made inside would leave its tokens in the guest
            d = new Decision(true, d.reason() + "; read for OAuth tokens", false, d.requestRules());
        }
        if (d.allowed()) {
            List<SecretBinding> bound = secrets.boundTo(host, port);
            if (!bound.isEmpty()) {
                return new Decision(true, d.reason() + "; carries secret "
                        + String.join(", ", bound.stream().map(SecretBinding::name).toList()), false,
                        d.requestRules());
            }
        }
        return d;
    }

    public SecretBindings secrets() {
        return secrets;
    }

    /** The logins made inside this sandbox: their token endpoints and the tokens learned from them. */
    OAuthLogins logins() {
        return logins;
    }

    /**
     * Which providers' token endpoints to read, and who keeps the real tokens learned there. Tokens learned before
     * are forgotten (call it before the guest runs).
     */
    public void logins(dev.kosa8.secrets.OAuthProviders providers, OAuthKeeper keeper) {
        logins = new OAuthLogins(providers, keeper, this::rebind);
        rebind();
    }

    /** Tokens of a login made inside before this broker started, as its keeper kept them. */
    public void restoreLogin(String provider, List<dev.kosa8.secrets.TokenResponses.Token> tokens) {
        logins.restore(provider, tokens);
    }

    private synchronized void rebind() {
        SecretBindings next = granted.with(logins.bindings());
        secrets = next;
        carried.closePassedThroughToKeyedHosts(next);
    }

    /**
     * Takes effect with the next request. Guest connections passed through
     * unread to a host that now has a key are closed, so the guest's next
     * connection is intercepted and gets it.
     */
    public void secrets(SecretBindings next) {
        granted = next;
        rebind();
    }

    /** The guest connections open on the broker's listeners (tests). */
    int openConnections() {
        return connections.open();
    }

    /** The rate the DNS listener keeps to; null for none. */
    QueryRate dnsRate() {
        return dnsRate;
    }

    /** Keeps the DNS listener to {@code rate} from now on ({@link EgressService} sets every sandbox's). */
    void limitDns(QueryRate rate) {
        this.dnsRate = rate;
    }

    public AuditLog audit() {
        return audit;
    }

    /** Resolves a name to dial for the guest, under the policy in force now (its address exceptions). */
    java.util.concurrent.CompletableFuture<Upstreams.Target> resolveAsync(String host, int port) {
        return upstreams.resolveAsync(host, port, policy);
    }

    dev.kosa8.egress.tls.SandboxCa ca() {
        return ca;
    }

    io.netty.handler.ssl.SslContext upstreamTls() {
        return upstreamTls;
    }

    /**
     * Offers the upstreams of HTTP/2 guest connections HTTP/2 through {@code ctx} (which must verify as the
     * context given to {@link #start} does: {@code UpstreamTls.http2ClientContext}); null: HTTP/1.1 only, as
     * before. Takes effect for the next upstream connection.
     */
    public void upstreamHttp2(io.netty.handler.ssl.SslContext ctx) {
        upstreamHttp2 = ctx;
    }

    io.netty.handler.ssl.SslContext upstreamHttp2() {
        return upstreamHttp2;
    }

    /** Permits for HTTP/2 upstream connections, {@link #MAX_HTTP2_UPSTREAMS} of them: one taken per dial offering h2. */
    java.util.concurrent.Semaphore http2Upstreams() {
        return http2Upstreams;
    }

    /**
     * How every upstream is dialed: on the guest connection's own event loop (so the two never need locking),
     * with auto-read off (the relays read only when the other side can take more), within the connect timeout.
     */
    io.netty.channel.ChannelFuture dial(io.netty.channel.EventLoop loop, io.netty.channel.ChannelHandler handler,
                                        java.net.InetSocketAddress address) {
        return new io.netty.bootstrap.Bootstrap().group(loop).channel(dev.kosa8.host.NettyTransport.CURRENT.tcpSocket())
                .option(io.netty.channel.ChannelOption.AUTO_READ, false)
                .option(io.netty.channel.ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT_MILLIS)
                .handler(handler)
                .connect(address);
    }

    public Map<Listener, Path> sockets() {
        return Map.copyOf(sockets);
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            if (link != null) {
                link.close();
                link = null;
            }
        }
        for (Channel c : servers) {
            c.close().awaitUninterruptibly(2000);
        }
        connections.closeAll(2000); // their upstreams close with them
        for (Path p : sockets.values()) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException ignored) {
                // the runtime directory is cleaned with the sandbox
            }
        }
        audit.close();
    }
}
