package dev.kosa8.egress;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
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
import java.util.Map;

/**
 * Carries one allowed plain-HTTP request to its upstream and the response
 * back. The broker re-frames the request from its own parse (so the upstream
 * sees exactly the request the policy judged), strips hop-by-hop headers,
 * dials the address it resolved and checked, and never follows a redirect:
 * a 3xx goes back to the guest, whose next request is judged on its own.
 * The guest's connection stays open for its next request when the response
 * had a length of its own (Content-Length or chunked), and is closed after
 * it otherwise, so the framing the guest sees is never ambiguous. While it
 * stays open, its requests to the same host reuse one upstream connection
 * ({@link UpstreamSlot}), opened to the address checked when it was dialed.
 */
final class HttpForward {
    private static final List<CharSequence> HOP_BY_HOP = List.of(HttpHeaderNames.CONNECTION,
            HttpHeaderNames.KEEP_ALIVE, HttpHeaderNames.PROXY_AUTHORIZATION, HttpHeaderNames.PROXY_AUTHENTICATE,
            HttpHeaderNames.PROXY_CONNECTION, HttpHeaderNames.TE, HttpHeaderNames.TRAILER, HttpHeaderNames.UPGRADE);

    private static final String CODEC = "codec";
    private static final String INFLATE = "inflate";

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
    private final UpstreamSlot slot;
    /** The guest asked to keep its connection (HTTP/1.1 without "Connection: close", or 1.0 with keep-alive). */
    private boolean guestKeepAlive;
    /** The secrets put into this request: those bound to its host, over TLS only. */
    private final List<SecretBinding> inject;
    /** Some secret is bound to this host: its responses are decompressed so that all of them can be scrubbed. */
    private final boolean boundHost;
    /** Takes real keys out of the response, or null when the sandbox holds none. */
    private final dev.kosa8.secrets.KeyScrubber scrubber;

    /**
     * @param tls  the upstream speaks TLS, verified by the broker against the host name
     * @param next called on the guest's event loop when the response is complete and the guest's connection
     *             may carry another request
     */
    HttpForward(Broker broker, Listener listener, Channel guest, FullHttpRequest request, String host, int port,
                String path, String reason, boolean tls, UpstreamSlot slot, Runnable next) {
        this.tls = tls;
        this.slot = slot;
        this.next = next;
        this.broker = broker;
        this.listener = listener;
        this.guest = guest;
        this.request = request;
        this.host = host;
        this.port = port;
        this.path = path;
        this.reason = reason;
        SecretBindings secrets = broker.secrets();
        List<SecretBinding> bound = secrets.boundTo(host, port);
        this.boundHost = !bound.isEmpty();
        this.inject = tls ? bound : List.of();
        this.scrubber = secrets.scrubber();
    }

    void start() {
        guest.config().setAutoRead(false);
        String key = host + ":" + port;
        Channel kept = slot.take(key);
        if (kept != null) {
            send(kept, slot.target());
            return;
        }
        broker.resolveAsync(host, port).whenComplete((target, err) -> guest.eventLoop().execute(() -> {
            if (err != null) {
                Upstreams.Refused r = Upstreams.refusal(err);
                fail(Denials.unreachable(broker.sandboxId(), r), r.getMessage(), null);
                return;
            }
            broker.dial(guest.eventLoop(), new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            if (tls) {
                                ch.pipeline().addLast(dev.kosa8.egress.tls.UpstreamTls.handlerFor(broker.upstreamTls(),
                                        ch.alloc(), host, port));
                            }
                            ch.pipeline().addLast(CODEC, new HttpClientCodec(8192, 64 * 1024, 64 * 1024));
                        }
                    }, target.address())
                    .addListener((ChannelFutureListener) f -> {
                        if (!f.isSuccess()) {
                            fail(HttpResponseStatus.BAD_GATEWAY, "cannot connect to " + host + " (" + target.via()
                                    + "): " + f.cause().getMessage(), target.via());
                            return;
                        }
                        Channel up = f.channel();
                        broker.track(host, port, guest);
                        slot.keep(key, up, target);
                        // the upstream dies with the guest; the listener goes with the upstream
                        io.netty.util.concurrent.GenericFutureListener<io.netty.util.concurrent.Future<? super Void>>
                                closeUpstream = g -> up.close();
                        guest.closeFuture().addListener(closeUpstream);
                        up.closeFuture().addListener(x -> {
                            guest.closeFuture().removeListener(closeUpstream);
                            slot.drop(up);
                        });
                        send(up, target);
                    });
        }));
    }

    /** Sends the request on an open upstream connection, with this request's relay for the response. */
    private void send(Channel up, Upstreams.Target target) {
        Exchange exchange = new Exchange(broker.audit(), listener, host, port, request.method().name(), path,
                target.via(), target.reason(reason));
        exchange.sent(request.content().readableBytes());
        prepare(request);
        if (!inject.isEmpty()) {
            SecretInjection.apply(request, inject);
            exchange.secret(String.join(",", inject.stream().map(SecretBinding::name).toList()));
        }
        if (boundHost && up.pipeline().get(INFLATE) == null) {
            // asked for identity (SecretInjection), but a server may compress anyway: a real key must not pass
            // hidden inside gzip or deflate
            up.pipeline().addAfter(CODEC, INFLATE, new io.netty.handler.codec.http.HttpContentDecompressor(0));
        }
        up.pipeline().addLast("response", new ResponseRelay(exchange, up));
        up.writeAndFlush(request).addListener((ChannelFutureListener) w -> {
            if (w.isSuccess()) {
                w.channel().read();
            } else {
                w.channel().close();
            }
        });
    }

    private void prepare(FullHttpRequest r) {
        guestKeepAlive = io.netty.handler.codec.http.HttpUtil.isKeepAlive(r); // before its Connection header goes
        HttpHeaders h = r.headers();
        for (String token : h.getAll(HttpHeaderNames.CONNECTION)) {
            for (String name : token.split(",")) {
                h.remove(name.strip());
            }
        }
        HOP_BY_HOP.forEach(h::remove);
        h.set(HttpHeaderNames.HOST, port == 80 ? host : host + ":" + port);
        h.remove(HttpHeaderNames.TRANSFER_ENCODING);
        h.setInt(HttpHeaderNames.CONTENT_LENGTH, r.content().readableBytes());
    }

    /** A body still encoded after the decompressor: one it does not know (br, zstd), so unreadable to a scrubber. */
    private static boolean unreadable(HttpResponse res) {
        String enc = res.headers().get(HttpHeaderNames.CONTENT_ENCODING);
        return enc != null && !enc.isBlank() && !enc.strip().equalsIgnoreCase("identity");
    }

    private void fail(HttpResponseStatus status, String why, String address) {
        fail(Denials.ending(status, broker.sandboxId(), null, why), why, address);
    }

    private void fail(io.netty.handler.codec.http.FullHttpResponse res, String why, String address) {
        ReferenceCountUtil.safeRelease(request);
        broker.audit().write(new AuditEvent(Instant.now(), listener.label(), host, port, request.method().name(), path,
                address, "deny", why, null, null, null));
        guest.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
    }

    /** Upstream → guest, one HTTP object at a time, reading on while the guest keeps up. */
    private final class ResponseRelay extends SimpleChannelInboundHandler<HttpObject> {
        private final Exchange exchange;
        private final Channel up;
        private boolean responded;
        private boolean keepGuest;
        private boolean keepUpstream;
        private boolean done;
        private boolean lastSeen;
        private boolean interim;
        private io.netty.channel.ChannelFuture lastWrite;
        private dev.kosa8.secrets.KeyScrubber.Session scrub;

        ResponseRelay(Exchange exchange, Channel up) {
            super(false);
            this.exchange = exchange;
            this.up = up;
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
            if (msg instanceof HttpResponse res && scrubber != null) {
                scrubHeaders(res.headers());
                if (boundHost && unreadable(res)) {
                    ReferenceCountUtil.release(msg);
                    String why = host + " answered in Content-Encoding '"
                            + res.headers().get(HttpHeaderNames.CONTENT_ENCODING) + "', which the broker cannot "
                            + "search for a key; it asked for identity";
                    exchange.outcome("refused: " + why);
                    responded = true;
                    done = true;
                    guest.writeAndFlush(Denials.response(HttpResponseStatus.BAD_GATEWAY, "kosa8: " + why + "\n"))
                            .addListener(ChannelFutureListener.CLOSE);
                    ctx.close();
                    return;
                }
                if (scrub == null && res.status().codeClass() != io.netty.handler.codec.http.HttpStatusClass.INFORMATIONAL) {
                    scrub = scrubber.session();
                }
            }
            if (msg instanceof HttpResponse res && res.status().codeClass()
                    == io.netty.handler.codec.http.HttpStatusClass.INFORMATIONAL) {
                // 100 Continue, 103 Early Hints: passed on; the empty "last content" the codec adds after it is not
                // the end of the response
                interim = true;
                lastWrite = guest.write(msg);
                return;
            }
            if (interim && msg instanceof LastHttpContent && !(msg instanceof HttpResponse)) {
                interim = false;
                ReferenceCountUtil.release(msg);
                return;
            }
            if (msg instanceof HttpResponse res) {
                responded = true;
                exchange.outcome("HTTP " + res.status().code());
                keepUpstream = io.netty.handler.codec.http.HttpUtil.isKeepAlive(res);
                HOP_BY_HOP.forEach(res.headers()::remove);
                keepGuest = guestKeepAlive && (io.netty.handler.codec.http.HttpUtil.isContentLengthSet(res)
                        || io.netty.handler.codec.http.HttpUtil.isTransferEncodingChunked(res)
                        || res.status().code() == 204 || res.status().code() == 304
                        || request.method() == io.netty.handler.codec.http.HttpMethod.HEAD);
                if (!keepGuest) {
                    res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
                }
            }
            if (msg instanceof HttpContent c) {
                exchange.received(c.content().readableBytes());
                if (scrub != null) {
                    msg = scrubbed(c);
                }
            }
            // written now, flushed once per read (channelReadComplete): a small response leaves as one TLS record and
            // one segment, not one per HTTP object, which Nagle's algorithm on the guest's relay would hold back
            // until a delayed ACK (measured: 40 ms per request)
            lastSeen |= msg instanceof LastHttpContent;
            lastWrite = guest.write(msg);
        }

        /** The same content with every real key replaced by its placeholder, which has the same length. */
        private HttpObject scrubbed(HttpContent c) {
            ByteBuf out = scrub.feed(c.content()); // takes the content
            if (!(c instanceof LastHttpContent last)) {
                return c instanceof HttpResponse ? c.replace(out) : new DefaultHttpContent(out);
            }
            out = Unpooled.wrappedBuffer(out, scrub.finish());
            scrub = null;
            if (c instanceof HttpResponse) {
                return c.replace(out);
            }
            LastHttpContent l = new DefaultLastHttpContent(out);
            l.trailingHeaders().set(last.trailingHeaders());
            scrubHeaders(l.trailingHeaders());
            return l;
        }

        private void scrubHeaders(HttpHeaders headers) {
            List<Map.Entry<String, String>> entries = headers.entries();
            for (Map.Entry<String, String> e : entries) {
                if (!scrubber.scrub(e.getValue()).equals(e.getValue())) {
                    List<String> values = headers.getAll(e.getKey()).stream().map(scrubber::scrub).toList();
                    headers.set(e.getKey(), values);
                }
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (lastWrite == null) {
                ctx.read();
                return;
            }
            guest.flush();
            boolean last = lastSeen;
            if (!last && guest.isWritable()) {
                // the guest keeps up: read on at once, so reading upstream overlaps writing to the guest (waiting for
                // each write instead measured 0.39x of direct throughput, intercepted); a failed write closes both
                lastWrite.addListener((ChannelFutureListener) f -> {
                    if (!f.isSuccess()) {
                        ctx.close();
                    }
                });
                lastWrite = null;
                ctx.read();
                return;
            }
            // the end of the response, or the guest is behind (its buffer passed the high-water mark): go on once it
            // has taken what was written, so a slow guest holds the upstream back instead of filling the heap
            lastWrite.addListener((ChannelFutureListener) f -> {
                if (!f.isSuccess()) {
                    ctx.close();
                } else if (last) {
                    if (done) {
                        return;
                    }
                    done = true;
                    exchange.end();
                    ctx.pipeline().remove(this);
                    if (!keepUpstream || !keepGuest) {
                        up.close();
                    }
                    if (keepGuest) {
                        next.run();
                    } else {
                        guest.close();
                    }
                } else {
                    ctx.read();
                }
            });
            lastWrite = null;
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            exchange.end();
            if (!done) {
                // the upstream went away mid-response (a response without a length ends this way too)
                Relay.closeAfterFlush(guest);
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
