package dev.kosa8.egress;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * Finds one {@link HttpForward}'s request an upstream connection and hands it back to be sent on: a stream of the
 * guest connection's shared HTTP/2 connection to the host ({@link UpstreamHttp2}), an idle HTTP/1.1 one
 * ({@link UpstreamSlot}), or a new one, dialed to the address the broker resolved and checked. A dial that offers
 * HTTP/2 holds one of the sandbox's HTTP/2 permits and makes the host's other requests wait for it; once the TLS
 * handshake says which protocol the server chose (ALPN), the request goes on in HTTP/2, or in HTTP/1.1 when the
 * server chose it or nothing, and the requests that waited go on too, whether the dial worked or failed.
 * Runs on the guest connection's event loop.
 */
final class UpstreamDial {
    private final Broker broker;
    private final HttpForward forward;
    private final Channel guest;
    private final UpstreamSlot slot;
    private final String host;
    private final int port;
    private final boolean tls;

    UpstreamDial(Broker broker, HttpForward forward) {
        this.broker = broker;
        this.forward = forward;
        this.guest = forward.guest();
        this.slot = forward.slot();
        this.host = forward.host();
        this.port = forward.port();
        this.tls = forward.tls();
    }

    /**
     * Finds the request an upstream connection: a stream of a shared HTTP/2 one, an idle HTTP/1.1 one, or a new
     * one. An HTTP/2 guest's request offers HTTP/2 to the server ({@link UpstreamHttp2}); a WebSocket handshake and
     * an HTTP/1.1 guest's requests offer HTTP/1.1 only, so their framing and upgrade stay what the guest sent.
     */
    void connect(String key) {
        boolean offerH2 = tls && forward.framed() && !forward.webSocket() && broker.upstreamHttp2() != null
                && !slot.isHttp1(key);
        if (offerH2) {
            UpstreamHttp2.Session s = slot.session(key);
            if (s != null) {
                openStream(s);
                return;
            }
            if (slot.dialing(key)) {
                slot.await(key, () -> connect(key));
                return;
            }
        }
        // a WebSocket keeps its connection for good
        UpstreamSlot.Idle kept = forward.webSocket() ? null : slot.take(key);
        if (kept != null) {
            forward.send(kept.channel(), kept.target());
            return;
        }
        if (offerH2 && !broker.http2Upstreams().tryAcquire()) {
            // the sandbox holds its most HTTP/2 upstream connections (Broker.MAX_HTTP2_UPSTREAMS): this one
            // speaks HTTP/1.1, which holds nothing ahead of the guest
            offerH2 = false;
        }
        if (offerH2) {
            slot.dialStarted(key);
        }
        dial(key, offerH2);
    }

    private void dial(String key, boolean offerH2) {
        broker.resolveAsync(host, port).whenComplete((target, err) -> guest.eventLoop().execute(() -> {
            if (err != null) {
                endDial(key, offerH2);
                Upstreams.Refused r = Upstreams.refusal(err);
                forward.fail(Denials.unreachable(broker.sandboxId(), r), r.getMessage(), null);
                return;
            }
            broker.dial(guest.eventLoop(), new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            if (tls) {
                                ch.pipeline().addLast(dev.kosa8.egress.tls.UpstreamTls.handlerFor(offerH2
                                        ? broker.upstreamHttp2() : broker.upstreamTls(), ch.alloc(), host, port));
                            }
                            if (!offerH2) {
                                ch.pipeline().addLast(HttpForward.CODEC, codec());
                            }
                        }
                    }, target.address())
                    .addListener((ChannelFutureListener) f -> {
                        if (!f.isSuccess()) {
                            endDial(key, offerH2);
                            forward.fail(HttpResponseStatus.BAD_GATEWAY, "cannot connect to " + host + " ("
                                    + target.via() + "): " + f.cause().getMessage(), target.via());
                            return;
                        }
                        Channel up = f.channel();
                        if (offerH2) {
                            // the permit goes with the connection, whichever protocol its server chose
                            up.closeFuture().addListener(x -> broker.http2Upstreams().release());
                        }
                        Channel owner = slot.owner();
                        broker.track(host, port, owner);
                        // the upstream dies with the guest's connection; the listener goes with the upstream
                        io.netty.util.concurrent.GenericFutureListener<io.netty.util.concurrent.Future<? super Void>>
                                closeUpstream = g -> up.close();
                        owner.closeFuture().addListener(closeUpstream);
                        up.closeFuture().addListener(x -> {
                            owner.closeFuture().removeListener(closeUpstream);
                            slot.drop(up);
                        });
                        if (offerH2) {
                            negotiated(key, up, target);
                        } else {
                            forward.send(up, target);
                        }
                    });
        }));
    }

    private void endDial(String key, boolean offerH2) {
        if (offerH2) {
            broker.http2Upstreams().release(); // no connection was made: its permit back
            slot.dialEnded(key);
        }
    }

    /** Once the TLS handshake says which protocol the server chose, the request goes on in it. */
    private void negotiated(String key, Channel up, Upstreams.Target target) {
        io.netty.handler.ssl.SslHandler ssl = up.pipeline().get(io.netty.handler.ssl.SslHandler.class);
        ssl.handshakeFuture().addListener(h -> {
            if (!h.isSuccess()) {
                slot.dialEnded(key);
                forward.upstreamFailed(target, h.cause());
                up.close();
                return;
            }
            if (io.netty.handler.ssl.ApplicationProtocolNames.HTTP_2.equals(ssl.applicationProtocol())) {
                UpstreamHttp2.Session s;
                try {
                    s = UpstreamHttp2.install(up, key, target);
                } catch (RuntimeException e) { // the requests waiting for this dial go on, not hang
                    slot.dialEnded(key);
                    forward.upstreamFailed(target, e);
                    up.close();
                    return;
                }
                slot.share(s);
                openStream(s); // first: the stream that dialed is the first the new connection carries
                slot.dialEnded(key);
                return;
            }
            slot.http1(key); // chose http/1.1, or no protocol at all
            up.pipeline().addLast(HttpForward.CODEC, codec());
            slot.dialEnded(key);
            forward.send(up, target);
        });
        up.read(); // the handshake reads on its own from here until it is done
    }

    private void openStream(UpstreamHttp2.Session s) {
        s.open().addListener(f -> {
            if (f.isSuccess()) {
                forward.send((Channel) f.getNow(), s.target());
            } else {
                forward.fail(HttpResponseStatus.BAD_GATEWAY, "cannot open an HTTP/2 stream to " + host + ": "
                        + f.cause().getMessage(), s.target().via());
            }
        });
    }

    /** The HTTP/1.1 codec of an upstream connection: limits on its initial line, headers and chunks. */
    private static HttpClientCodec codec() {
        return new HttpClientCodec(8192, 64 * 1024, 64 * 1024);
    }
}
