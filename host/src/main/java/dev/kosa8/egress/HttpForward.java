package dev.kosa8.egress;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.time.Instant;
import java.util.List;

/**
 * Carries one allowed plain-HTTP request to its upstream and the response
 * back. The broker re-frames the request from its own parse (so the upstream
 * sees exactly the request the policy judged), strips hop-by-hop headers,
 * dials the address it resolved and checked, and never follows a redirect:
 * a 3xx goes back to the guest, whose next request is judged on its own.
 * Each request gets its own upstream connection, closed after the response;
 * the guest's connection stays open for its next request when the response
 * had a length of its own (Content-Length or chunked), and is closed after
 * it otherwise, so the framing the guest sees is never ambiguous.
 */
final class HttpForward {
    private static final List<CharSequence> HOP_BY_HOP = List.of(HttpHeaderNames.CONNECTION,
            HttpHeaderNames.KEEP_ALIVE, HttpHeaderNames.PROXY_AUTHORIZATION, HttpHeaderNames.PROXY_AUTHENTICATE,
            HttpHeaderNames.PROXY_CONNECTION, HttpHeaderNames.TE, HttpHeaderNames.TRAILER, HttpHeaderNames.UPGRADE);

    private final Broker broker;
    private final Listener listener;
    private final Channel guest;
    private final FullHttpRequest request;
    private final String host;
    private final int port;
    private final String path;
    private final String reason;
    private final boolean tls;
    private final Runnable next;

    /**
     * @param tls  the upstream speaks TLS, verified by the broker against the host name
     * @param next called on the guest's event loop when the response is complete and the guest's connection
     *             may carry another request
     */
    HttpForward(Broker broker, Listener listener, Channel guest, FullHttpRequest request, String host, int port,
                String path, String reason, boolean tls, Runnable next) {
        this.tls = tls;
        this.next = next;
        this.broker = broker;
        this.listener = listener;
        this.guest = guest;
        this.request = request;
        this.host = host;
        this.port = port;
        this.path = path;
        this.reason = reason;
    }

    void start() {
        guest.config().setAutoRead(false);
        String method = request.method().name();
        broker.upstreams().resolveAsync(host, port).whenComplete((target, err) -> guest.eventLoop().execute(() -> {
            if (err != null) {
                Throwable c = err.getCause() != null ? err.getCause() : err;
                fail(HttpResponseStatus.FORBIDDEN, c.getMessage(), null);
                return;
            }
            Exchange exchange = new Exchange(broker.audit(), listener, host, port, method, path, target.via(), reason);
            exchange.sent(request.content().readableBytes());
            prepare(request);
            new Bootstrap().group(guest.eventLoop()).channel(broker.upstreamChannel())
                    .option(ChannelOption.AUTO_READ, false)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, Broker.CONNECT_TIMEOUT_MILLIS)
                    .handler(new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            if (tls) {
                                ch.pipeline().addLast(dev.kosa8.egress.tls.UpstreamTls.handlerFor(broker.upstreamTls(),
                                        ch.alloc(), host, port));
                            }
                            ch.pipeline().addLast(new HttpClientCodec(8192, 64 * 1024, 64 * 1024));
                            ch.pipeline().addLast(new ResponseRelay(exchange));
                        }
                    })
                    .connect(target.address())
                    .addListener((ChannelFutureListener) f -> {
                        if (!f.isSuccess()) {
                            fail(HttpResponseStatus.BAD_GATEWAY, "cannot connect to " + host + " (" + target.via()
                                    + "): " + f.cause().getMessage(), target.via());
                            return;
                        }
                        broker.track(host, port, guest);
                        f.channel().writeAndFlush(request).addListener((ChannelFutureListener) w -> {
                            if (w.isSuccess()) {
                                w.channel().read();
                            } else {
                                w.channel().close();
                            }
                        });
                        // the upstream dies with the guest; the listener goes with the upstream (keep-alive guests
                        // carry many requests, and must not collect one listener each)
                        io.netty.util.concurrent.GenericFutureListener<io.netty.util.concurrent.Future<? super Void>>
                                closeUpstream = g -> f.channel().close();
                        guest.closeFuture().addListener(closeUpstream);
                        f.channel().closeFuture().addListener(x -> guest.closeFuture().removeListener(closeUpstream));
                    });
        }));
    }

    private void prepare(FullHttpRequest r) {
        HttpHeaders h = r.headers();
        for (String token : h.getAll(HttpHeaderNames.CONNECTION)) {
            for (String name : token.split(",")) {
                h.remove(name.strip());
            }
        }
        HOP_BY_HOP.forEach(h::remove);
        h.set(HttpHeaderNames.HOST, port == 80 ? host : host + ":" + port);
        h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE); // the upstream connection is this request's only
        h.remove(HttpHeaderNames.TRANSFER_ENCODING);
        h.setInt(HttpHeaderNames.CONTENT_LENGTH, r.content().readableBytes());
    }

    private void fail(HttpResponseStatus status, String why, String address) {
        ReferenceCountUtil.safeRelease(request);
        broker.audit().write(new AuditEvent(Instant.now(), listener.label(), host, port, request.method().name(), path,
                address, "deny", why, null, null, null));
        var res = status == HttpResponseStatus.FORBIDDEN ? Denials.forbidden(broker.sandboxId(), null, why)
                : Denials.response(status, "kosa8: " + why + "\n");
        guest.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
    }

    /** Upstream → guest, one HTTP object at a time, reading on only when the guest took the last. */
    private final class ResponseRelay extends SimpleChannelInboundHandler<HttpObject> {
        private final Exchange exchange;
        private boolean responded;
        private boolean keepGuest;
        private boolean done;

        ResponseRelay(Exchange exchange) {
            super(false);
            this.exchange = exchange;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
            if (msg.decoderResult().isFailure()) {
                ReferenceCountUtil.release(msg);
                exchange.outcome("malformed upstream response");
                ctx.close();
                guest.close();
                return;
            }
            if (msg instanceof HttpResponse res) {
                responded = true;
                exchange.outcome("HTTP " + res.status().code());
                HOP_BY_HOP.forEach(res.headers()::remove);
                keepGuest = io.netty.handler.codec.http.HttpUtil.isContentLengthSet(res)
                        || io.netty.handler.codec.http.HttpUtil.isTransferEncodingChunked(res)
                        || res.status().code() == 204 || res.status().code() == 304
                        || request.method() == io.netty.handler.codec.http.HttpMethod.HEAD;
                if (!keepGuest) {
                    res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
                }
            }
            if (msg instanceof HttpContent c) {
                exchange.received(c.content().readableBytes());
            }
            boolean last = msg instanceof LastHttpContent;
            guest.writeAndFlush(msg).addListener((ChannelFutureListener) f -> {
                if (!f.isSuccess()) {
                    ctx.close();
                } else if (last) {
                    done = true;
                    ctx.close();
                    if (keepGuest) {
                        next.run();
                    } else {
                        guest.close();
                    }
                } else {
                    ctx.read();
                }
            });
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            exchange.end();
            if (!done) {
                Relay.closeAfterFlush(guest); // the upstream went away mid-response
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (!responded) {
                // typically the upstream's certificate failed verification: say so, and say it in the log
                responded = true;
                Throwable c = cause instanceof io.netty.handler.codec.DecoderException && cause.getCause() != null
                        ? cause.getCause() : cause;
                String why = "upstream " + host + ": " + c.getMessage();
                exchange.outcome("failed: " + why);
                guest.writeAndFlush(Denials.response(HttpResponseStatus.BAD_GATEWAY, "kosa8: " + why + "\n"))
                        .addListener(ChannelFutureListener.CLOSE);
            }
            ctx.close();
        }
    }
}
