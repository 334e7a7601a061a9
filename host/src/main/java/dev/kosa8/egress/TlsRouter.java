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
 * target). For most allowed names it resolves and checks the address on the
 * host, dials it, replays the ClientHello and relays the bytes untouched: the
 * upstream's certificate is verified by the guest's own client, end to end.
 * For names whose rules look inside requests it intercepts: TLS ends here
 * with the sandbox CA's leaf for that one name, and {@link HttpEntry} judges
 * each request before the broker carries it on over TLS it verifies itself.
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

    /** @param connectTarget the CONNECT request's host the SNI must equal, or null on the transparent port */
    TlsRouter(Broker broker, Listener listener, String connectTarget, int port) {
        super(MAX_CLIENT_HELLO, HELLO_TIMEOUT_MILLIS);
        this.broker = broker;
        this.listener = listener;
        this.connectTarget = connectTarget;
        this.port = port;
    }

    @Override
    protected Future<Route> lookup(ChannelHandlerContext ctx, String sni) {
        Promise<Route> p = ctx.executor().newPromise();
        host = sni == null ? connectTarget : HostName.normalize(sni);
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
                return refuse(p, d.reason() + ", which needs TLS interception, and this broker has no CA");
            }
            try {
                broker.ca().serverContextFor(host); // minted (and cached) here, so a name it refuses is refused now
            } catch (IllegalArgumentException e) {
                return refuse(p, "cannot make a certificate for " + host + ": " + e.getMessage());
            }
            p.trySuccess(new Route.Intercept());
            return p;
        }
        broker.upstreams().resolveAsync(host, port).whenComplete((target, err) -> ctx.executor().execute(() -> {
            if (err != null) {
                refuse(p, Upstreams.refusal(err).getMessage());
                return;
            }
            exchange = new Exchange(broker.audit(), listener, host, port, null, null, target.via(), d.reason());
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
        // the relay is added before this handler leaves, so the buffered ClientHello flows into it
        ctx.pipeline().addAfter(ctx.name(), "relay", new Relay(upstream, exchange, true));
        ctx.pipeline().remove(this);
        upstream.read();
    }

    /** TLS ends here: the leaf for the one name asked for, then the HTTP pipeline of an intercepted host. */
    private void intercept(ChannelHandlerContext ctx) {
        var p = ctx.pipeline();
        String name = ctx.name();
        io.netty.handler.ssl.SslHandler tls = broker.ca().serverContextFor(host).newHandler(ctx.alloc());
        tls.setHandshakeTimeoutMillis(HELLO_TIMEOUT_MILLIS);
        p.addAfter(name, "tls", tls);
        p.addAfter("tls", HttpEntry.IDLE, new io.netty.handler.timeout.IdleStateHandler(Broker.IDLE_SECONDS, 0, 0));
        p.addAfter(HttpEntry.IDLE, "decoder", new StrictRequestDecoder());
        p.addAfter("decoder", "encoder", new io.netty.handler.codec.http.HttpResponseEncoder());
        p.addAfter("encoder", "gate", new HeadGate(broker, listener, host, port));
        p.addAfter("gate", "aggregator", new io.netty.handler.codec.http.HttpObjectAggregator(Broker.MAX_BODY));
        p.addAfter("aggregator", "entry", new HttpEntry(broker, listener, host, port));
        broker.track(host, port, ctx.channel());
        p.remove(this); // the buffered ClientHello flows into the SslHandler
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
