package dev.kosa8.egress;

import dev.kosa8.net.HostName;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.AbstractSniHandler;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.time.Instant;

/**
 * Routes a guest's TLS connection by the name in its ClientHello (SNI): checks
 * the name against the policy (and, after a CONNECT, against the CONNECT
 * target). By default it intercepts: TLS ends here with the sandbox CA's leaf
 * for that one name, offering HTTP/2 when the guest does, and
 * {@link HttpEntry} judges each request (its Host or {@code :authority} must
 * be that name) before the broker carries it on over TLS it verifies itself.
 * For a host allowed {@code passthrough} it resolves and checks the address on
 * the host, dials it, replays the ClientHello and relays the bytes untouched
 * (the upstream's certificate is verified by the guest's own client, end to
 * end), refusing a ClientHello with Encrypted Client Hello and, through
 * {@link PassthroughGuard}, any later ClientHello that names another server.
 * A refusal is a TLS {@code access_denied} alert and a log line.
 */
final class TlsRouter extends AbstractSniHandler<Route> {
    private static final int MAX_CLIENT_HELLO = 64 * 1024;
    /**
     * The guest's ClientHello, and with interception its whole handshake, may take as long as any connection may
     * stand idle: a guest can hold an idle connection that long anyway, so a shorter bound protects nothing, while
     * under TCG on a loaded host a JVM's handshake in the guest was seen to take over Netty's default 10 s.
     */
    static final long HELLO_TIMEOUT_MILLIS = Broker.IDLE_SECONDS * 1000L;

    private final Broker broker;
    private final Listener listener;
    private final String connectTarget;
    private final int port;
    private volatile String refusal;
    private volatile String host;
    private volatile Exchange exchange;
    /** The ClientHello as {@link ClientHello} read it; null when it did not parse. */
    private volatile ClientHello hello;

    /** @param connectTarget the CONNECT request's host the SNI must equal, or null on the transparent port */
    TlsRouter(Broker broker, Listener listener, String connectTarget, int port) {
        super(MAX_CLIENT_HELLO, HELLO_TIMEOUT_MILLIS);
        this.broker = broker;
        this.listener = listener;
        this.connectTarget = connectTarget;
        this.port = port;
    }

    @Override
    protected Future<Route> lookup(ChannelHandlerContext ctx, io.netty.buffer.ByteBuf clientHello) throws Exception {
        hello = ClientHello.parse(clientHello);
        return super.lookup(ctx, clientHello); // reads the server name, then lookup(ctx, sni)
    }

    @Override
    protected Future<Route> lookup(ChannelHandlerContext ctx, String sni) {
        Promise<Route> p = ctx.executor().newPromise();
        host = sni == null ? connectTarget : HostName.normalize(sni);
        if (hello == null) {
            return refuse(p, "a TLS ClientHello that does not parse");
        }
        if (sni == null) {
            return refuse(p, "no TLS ClientHello with a server name (SNI); the broker routes TLS by name");
        }
        if (host == null) {
            return refuse(p, "the server name '" + sni + "' is not a host name");
        }
        if (connectTarget != null && !connectTarget.equals(host)) {
            return refuse(p, "the TLS server name " + host + " differs from the CONNECT target " + connectTarget);
        }
        Decision d = broker.connect(host, port);
        if (!d.allowed()) {
            return refuse(p, d.reason());
        }
        if (d.intercept()) {
            if (broker.ca() == null) {
                return refuse(p, d.reason() + ": the broker reads TLS to this host, and has no CA to do it with");
            }
            try {
                broker.ca().serverContextFor(host); // minted (and cached) here, so a name it refuses is refused now
            } catch (IllegalArgumentException e) {
                return refuse(p, "cannot make a certificate for " + host + ": " + e.getMessage());
            }
            p.trySuccess(new Route.Intercept());
            return p;
        }
        if (hello.ech()) {
            return refuse(p, PassthroughGuard.echRefusal(host));
        }
        broker.resolveAsync(host, port).whenComplete((target, err) -> ctx.executor().execute(() -> {
            if (err != null) {
                refuse(p, Upstreams.refusal(err).getMessage());
                return;
            }
            exchange = new Exchange(broker.audit(), listener, host, port, null, null, target.via(), target.reason(d.reason()));
            broker.dial(ctx.channel().eventLoop(), new Relay(ctx.channel(), exchange, false), target.address())
                    .addListener((ChannelFutureListener) f -> {
                        if (f.isSuccess() && !ctx.channel().isActive()) {
                            f.channel().close(); // the guest left (reset, hello timeout) while we dialed
                            p.tryFailure(new Upstreams.Refused("the guest closed the connection"));
                        } else if (f.isSuccess()) {
                            p.trySuccess(new Route.Pass(f.channel()));
                        } else {
                            refuse(p, "cannot connect to " + host + " (" + target.via() + "): "
                                    + f.cause().getMessage());
                        }
                    });
        }));
        return p;
    }

    private Promise<Route> refuse(Promise<Route> p, String reason) {
        refusal = reason;
        p.tryFailure(new Upstreams.Refused(reason));
        return p;
    }

    @Override
    protected void onLookupComplete(ChannelHandlerContext ctx, String sni, Future<Route> future) {
        try {
            complete(ctx, future);
        } catch (RuntimeException e) {
            // exceptions here go past this handler's exceptionCaught; nothing may leave the guest waiting
            if (future.isSuccess() && future.getNow() instanceof Route.Pass pass) {
                pass.upstream().close();
            }
            ctx.close();
        }
    }

    private void complete(ChannelHandlerContext ctx, Future<Route> future) {
        if (!future.isSuccess()) {
            String reason = refusal != null ? refusal : String.valueOf(future.cause());
            broker.audit().write(new AuditEvent(Instant.now(), listener.label(), host, port, null, null, null, "deny",
                    reason, null, null, null));
            ctx.writeAndFlush(Denials.tlsAccessDenied()).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        if (future.getNow() instanceof Route.Intercept) {
            intercept(ctx);
            return;
        }
        Channel upstream = ((Route.Pass) future.getNow()).upstream();
        broker.track(host, port, ctx.channel(), true);
        ctx.channel().config().setAutoRead(false);
        // the guard and relay join before this handler leaves, so the buffered ClientHello flows into them
        PassthroughGuard guard = new PassthroughGuard(broker, listener, host, port, upstream);
        upstream.pipeline().addFirst("hello-watch", guard.serverSide());
        ctx.pipeline().addAfter(ctx.name(), "guard", guard);
        ctx.pipeline().addAfter("guard", "relay", new Relay(upstream, exchange, true));
        ctx.pipeline().remove(this);
        upstream.read();
    }

    /**
     * TLS ends here: the leaf for the one name asked for, offering HTTP/2 when the guest's ClientHello does; once
     * the handshake says which, the handlers of that protocol.
     */
    private void intercept(ChannelHandlerContext ctx) {
        var p = ctx.pipeline();
        boolean h2 = hello.alpn().contains(io.netty.handler.ssl.ApplicationProtocolNames.HTTP_2);
        io.netty.handler.ssl.SslHandler tls = (h2 ? broker.ca().http2ServerContextFor(host)
                : broker.ca().serverContextFor(host)).newHandler(ctx.alloc());
        tls.setHandshakeTimeoutMillis(HELLO_TIMEOUT_MILLIS);
        p.addAfter(ctx.name(), "tls", tls);
        p.addAfter("tls", "alpn", new io.netty.handler.ssl.ApplicationProtocolNegotiationHandler(
                io.netty.handler.ssl.ApplicationProtocolNames.HTTP_1_1) {
            @Override
            protected void configurePipeline(ChannelHandlerContext c, String protocol) {
                if (io.netty.handler.ssl.ApplicationProtocolNames.HTTP_2.equals(protocol)) {
                    GuestHttp2.install(c.pipeline(), broker, listener, host, port);
                } else {
                    http1(c.pipeline());
                }
            }

            @Override
            protected void handshakeFailure(ChannelHandlerContext c, Throwable cause) {
                c.close(); // the guest's client said why, in its alert; nothing to log but noise
            }
        });
        broker.track(host, port, ctx.channel());
        p.remove(this); // the buffered ClientHello flows into the SslHandler
    }

    /** The handlers of an intercepted HTTP/1.1 connection, at the end of {@code p}. */
    private void http1(io.netty.channel.ChannelPipeline p) {
        p.addLast(HttpEntry.IDLE, new io.netty.handler.timeout.IdleStateHandler(Broker.IDLE_SECONDS, 0, 0));
        p.addLast("decoder", new StrictRequestDecoder());
        p.addLast("encoder", new io.netty.handler.codec.http.HttpResponseEncoder());
        p.addLast("gate", new HeadGate(broker, listener, host, port));
        p.addLast("aggregator", new BodySpool(broker, listener, host, port));
        p.addLast("entry", new HttpEntry(broker, listener, host, port));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
