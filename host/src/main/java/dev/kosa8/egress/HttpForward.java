package dev.kosa8.egress;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
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
    private static final String GATHER = "gather-token-response";

    private final Broker broker;
    private final Listener listener;
    private final Channel guest;
    private FullHttpRequest request;
    private final String host;
    private final int port;
    private final String path;
    private final String reason;
    private final boolean tls;
    /** The guest is one HTTP/2 stream: its protocol frames each response, and the stream ends with it. */
    private final boolean framed;
    /** A WebSocket handshake over HTTP/1.1: on the server's 101 both sides become a relay of bytes. */
    private final boolean webSocket;
    private final Runnable next;
    private final UpstreamSlot slot;
    /** The names of the tokens put into this request's body ({@link TokenExchange}). */
    private final List<String> swapped = new java.util.ArrayList<>();
    /** The guest asked to keep its connection (HTTP/1.1 without "Connection: close", or 1.0 with keep-alive). */
    private boolean guestKeepAlive;
    private boolean bodySent; // the whole body is written: until then (an early answer) the upstream is not kept
    /** The secrets put into this request: those bound to its host, over TLS only. */
    private final List<SecretBinding> inject;
    /** Some secret is bound to this host: its responses are decompressed so that all of them can be scrubbed. */
    private final boolean boundHost;
    /** Takes real keys out of the response, or null when the sandbox holds none. */
    private final dev.kosa8.secrets.KeyScrubber scrubber;
    /** The provider whose token endpoint this request goes to (over TLS), else null: its response is rewritten. */
    private final dev.kosa8.secrets.OAuthProvider login;

    /**
     * @param tls    the upstream speaks TLS, verified by the broker against the host name
     * @param framed the guest is an HTTP/2 stream
     * @param next   called on the guest's event loop when the response is complete and the guest's connection
     *               may carry another request
     */
    HttpForward(Broker broker, Listener listener, Channel guest, FullHttpRequest request, String host, int port,
                String path, String reason, boolean tls, boolean framed, UpstreamSlot slot, Runnable next) {
        this.tls = tls;
        this.framed = framed;
        this.webSocket = tls && !framed && isWebSocketHandshake(request);
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
        this.login = tls && request.method() == io.netty.handler.codec.http.HttpMethod.POST
                ? broker.logins().endpoint(host, port, request.uri()).orElse(null) : null;
        this.boundHost = !bound.isEmpty() || login != null;
        this.inject = tls ? bound : List.of();
        this.scrubber = secrets.scrubber();
    }

    FullHttpRequest request() {
        return request;
    }

    /** The request's body was rewritten: {@code next} replaces it, its tokens named {@code fields}. */
    void replaceRequest(FullHttpRequest next, List<String> fields) {
        request = next;
        swapped.addAll(fields);
    }

    void start() {
        if (!tls && request.method() == io.netty.handler.codec.http.HttpMethod.POST
                && broker.logins().endpoint(host, 443, request.uri()).isPresent()) {
            // its answer would carry tokens the broker never reads over plain HTTP
            fail(HttpResponseStatus.FORBIDDEN, "an OAuth token endpoint is reached over HTTPS only: use https://"
                    + host, null);
            return;
        }
        if (login != null) {
            String refused = TokenExchange.swapIn(this, broker.logins().realByPlaceholder(login));
            if (refused != null) {
                fail(HttpResponseStatus.BAD_REQUEST, refused, null);
                return;
            }
        }
        guest.config().setAutoRead(false);
        connect(host + ":" + port);
    }

    /**
     * Finds the request an upstream connection: a stream of a shared HTTP/2 one, an idle HTTP/1.1 one, or a new
     * one. An HTTP/2 guest's request offers HTTP/2 to the server ({@link UpstreamHttp2}); a WebSocket handshake and
     * an HTTP/1.1 guest's requests offer HTTP/1.1 only, so their framing and upgrade stay what the guest sent.
     */
    private void connect(String key) {
        boolean offerH2 = tls && framed && !webSocket && broker.upstreamHttp2() != null && !slot.isHttp1(key);
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
        UpstreamSlot.Idle kept = webSocket ? null : slot.take(key); // a WebSocket keeps its connection for good
        if (kept != null) {
            send(kept.channel(), kept.target());
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
                fail(Denials.unreachable(broker.sandboxId(), r), r.getMessage(), null);
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
                                ch.pipeline().addLast(CODEC, new HttpClientCodec(8192, 64 * 1024, 64 * 1024));
                            }
                        }
                    }, target.address())
                    .addListener((ChannelFutureListener) f -> {
                        if (!f.isSuccess()) {
                            endDial(key, offerH2);
                            fail(HttpResponseStatus.BAD_GATEWAY, "cannot connect to " + host + " (" + target.via()
                                    + "): " + f.cause().getMessage(), target.via());
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
                            send(up, target);
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
                upstreamFailed(target, h.cause());
                up.close();
                return;
            }
            if (io.netty.handler.ssl.ApplicationProtocolNames.HTTP_2.equals(ssl.applicationProtocol())) {
                UpstreamHttp2.Session s;
                try {
                    s = UpstreamHttp2.install(up, key, target);
                } catch (RuntimeException e) { // the requests waiting for this dial go on, not hang
                    slot.dialEnded(key);
                    upstreamFailed(target, e);
                    up.close();
                    return;
                }
                slot.share(s);
                openStream(s); // first: the stream that dialed is the first the new connection carries
                slot.dialEnded(key);
                return;
            }
            slot.http1(key); // chose http/1.1, or no protocol at all
            up.pipeline().addLast(CODEC, new HttpClientCodec(8192, 64 * 1024, 64 * 1024));
            slot.dialEnded(key);
            send(up, target);
        });
        up.read(); // the handshake reads on its own from here until it is done
    }

    private void openStream(UpstreamHttp2.Session s) {
        s.open().addListener(f -> {
            if (f.isSuccess()) {
                send((Channel) f.getNow(), s.target());
            } else {
                fail(HttpResponseStatus.BAD_GATEWAY, "cannot open an HTTP/2 stream to " + host + ": "
                        + f.cause().getMessage(), s.target().via());
            }
        });
    }

    /** The upstream's TLS failed (typically its certificate did not verify): a 502 that says so, and a log line. */
    private void upstreamFailed(Upstreams.Target target, Throwable cause) {
        Exchange exchange = new Exchange(broker.audit(), listener, host, port, request.method().name(), path,
                target.via(), target.reason(reason));
        Throwable c = cause instanceof io.netty.handler.codec.DecoderException && cause.getCause() != null
                ? cause.getCause() : cause;
        String why = "upstream " + host + ": " + c.getMessage();
        exchange.outcome("failed: " + why);
        exchange.end();
        ReferenceCountUtil.safeRelease(request);
        guest.writeAndFlush(Denials.response(HttpResponseStatus.BAD_GATEWAY, "kosa8: " + why + "\n"))
                .addListener(ChannelFutureListener.CLOSE);
    }

    /** Sends the request on an open upstream connection, with this request's relay for the response. */
    private void send(Channel up, Upstreams.Target target) {
        Exchange exchange = new Exchange(broker.audit(), listener, host, port, request.method().name(), path,
                target.via(), target.reason(reason));
        exchange.sent(SpooledRequest.bodyLength(request));
        prepare(request);
        List<String> used = new java.util.ArrayList<>(swapped);
        if (!inject.isEmpty()) {
            used.addAll(SecretInjection.apply(request, inject));
        }
        if (login != null) {
            request.headers().set(HttpHeaderNames.ACCEPT_ENCODING, HttpHeaderValues.IDENTITY);
        }
        if (!used.isEmpty()) {
            exchange.secret(String.join(",", used));
        }
        if (boundHost && up.pipeline().get(INFLATE) == null) {
            // asked for identity (SecretInjection), but a server may compress anyway: a real key must not pass
            // hidden inside gzip or deflate
            up.pipeline().addAfter(CODEC, INFLATE, new io.netty.handler.codec.http.HttpContentDecompressor(0));
        }
        if (login != null && up.pipeline().get(GATHER) == null) {
            // a token response is read whole (within its bound) before any of it goes to the guest
            up.pipeline().addAfter(INFLATE, GATHER, new io.netty.handler.codec.http.HttpObjectAggregator(
                    dev.kosa8.secrets.TokenResponses.MAX_BODY));
        } else if (login == null && up.pipeline().get(GATHER) != null) {
            up.pipeline().remove(GATHER); // a kept connection's next request is an ordinary one
        }
        up.pipeline().addLast("response", new ResponseRelay(exchange, up, target));
        SpooledRequest.write(up, request, CODEC, () -> bodySent = true).addListener((ChannelFutureListener) w -> {
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
        for (var x : io.netty.handler.codec.http2.HttpConversionUtil.ExtensionHeaderNames.values()) {
            h.remove(x.text()); // what Netty's HTTP/2 codec added, or the guest sent in their name
        }
        if (webSocket) {
            h.set(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET);
            h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.UPGRADE);
        }
        h.set(HttpHeaderNames.HOST, port == 80 ? host : host + ":" + port);
        h.remove(HttpHeaderNames.TRANSFER_ENCODING);
        h.set(HttpHeaderNames.CONTENT_LENGTH, SpooledRequest.bodyLength(r));
    }

    /** An HTTP/1.1 GET asking to become a WebSocket (RFC 6455 4.1): Upgrade names it, Connection names Upgrade. */
    static boolean isWebSocketHandshake(FullHttpRequest r) {
        HttpHeaders h = r.headers();
        return r.method() == io.netty.handler.codec.http.HttpMethod.GET
                && h.containsValue(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET, true)
                && h.containsValue(HttpHeaderNames.CONNECTION, HttpHeaderValues.UPGRADE, true);
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
        private final Upstreams.Target target;
        /** Ends the upstream's request when the guest goes (an HTTP/2 stream reset, a closed connection) first. */
        private final io.netty.util.concurrent.GenericFutureListener<io.netty.util.concurrent.Future<? super Void>>
                guestGone;
        private boolean responded;
        private boolean keepGuest;
        private boolean keepUpstream;
        private boolean done;
        private boolean lastSeen;
        private boolean interim;
        /** The server accepted a WebSocket: the exchange goes on in the relays that replace this one. */
        private boolean upgraded;
        private io.netty.channel.ChannelFuture lastWrite;
        private dev.kosa8.secrets.KeyScrubber.Session scrub;
        /** The upstream is one stream of an HTTP/2 connection ({@link UpstreamHttp2}): it ends with the response. */
        private final boolean stream;

        ResponseRelay(Exchange exchange, Channel up, Upstreams.Target target) {
            super(false);
            this.exchange = exchange;
            this.up = up;
            this.target = target;
            this.stream = up instanceof io.netty.handler.codec.http2.Http2StreamChannel;
            this.guestGone = g -> {
                // an HTTP/2 stream closes as its response's last frame is written, before that write's listener
                // runs: the upstream has answered in full then, and is kept for the connection's next stream
                if (!done && !lastSeen) {
                    up.close();
                }
            };
            guest.closeFuture().addListener(guestGone);
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            guest.closeFuture().removeListener(guestGone);
            if (!upgraded) { // a WebSocket's exchange goes on in its relays, which end it
                exchange.end(); // every exchange that went upstream has its audit line, however it ended (once)
            }
        }

        /** The guest could not take the response's end: said in the audit line, which is written now. */
        private void guestLeft() {
            if (!done) {
                exchange.outcome("the guest went away before the whole response reached it");
            }
            exchange.end();
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
            if (login != null && msg instanceof io.netty.handler.codec.http.FullHttpResponse full
                    && full.status().codeClass() != io.netty.handler.codec.http.HttpStatusClass.INFORMATIONAL) {
                String why = unreadable(full) ? host + " answered in Content-Encoding '"
                        + full.headers().get(HttpHeaderNames.CONTENT_ENCODING) + "', which the broker cannot read "
                        + "for OAuth tokens" : null;
                TokenExchange.Taken taken = why != null ? new TokenExchange.Taken(null, why)
                        : TokenExchange.takeOut(full, login, broker.logins());
                if (taken.refused() != null) {
                    ReferenceCountUtil.release(full);
                    refuseResponse(ctx, taken.refused());
                    return;
                }
                if (taken.response() != full) {
                    ReferenceCountUtil.release(full);
                }
                msg = taken.response();
                if (!taken.fields().isEmpty()) {
                    exchange.secret("oauth-" + login.name() + " learned " + String.join(",", taken.fields()));
                }
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
            if (msg instanceof HttpResponse res && webSocket
                    && res.status().code() == HttpResponseStatus.SWITCHING_PROTOCOLS.code()) {
                upgrade(ctx, res);
                return;
            }
            if (msg instanceof HttpResponse res) {
                for (var x : io.netty.handler.codec.http2.HttpConversionUtil.ExtensionHeaderNames.values()) {
                    res.headers().remove(x.text()); // what Netty's HTTP/2 codec added
                }
            }
            if (msg instanceof HttpResponse res && res.status().codeClass()
                    == io.netty.handler.codec.http.HttpStatusClass.INFORMATIONAL) {
                // 100 Continue, 103 Early Hints: passed on; the empty "last content" the HTTP/1.1 codec adds after
                // it is not the end of the response (HTTP/2's codec adds none, and the guest's wants it whole)
                interim = !stream;
                if (stream && !(msg instanceof io.netty.handler.codec.http.FullHttpResponse)) {
                    msg = new io.netty.handler.codec.http.DefaultFullHttpResponse(res.protocolVersion(), res.status(),
                            Unpooled.EMPTY_BUFFER, res.headers(), io.netty.handler.codec.http.DefaultHttpHeadersFactory
                            .trailersFactory().newHeaders());
                }
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
                keepGuest = framed || guestKeepAlive && (io.netty.handler.codec.http.HttpUtil.isContentLengthSet(res)
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

        /**
         * The server accepted the WebSocket: its 101 goes to the guest, and from here both connections carry
         * bytes both ways, unread, as a passed-through connection does (the request that opened it was judged,
         * and it stays with this host). The guest's HTTP handlers leave, the upstream's codec passes bytes.
         */
        private void upgrade(ChannelHandlerContext ctx, HttpResponse res) {
            responded = true;
            done = true;
            upgraded = true;
            exchange.outcome("HTTP 101, WebSocket");
            guest.writeAndFlush(res); // encoded now, before the guest's encoder leaves
            ChannelPipeline g = guest.pipeline();
            for (Class<? extends io.netty.channel.ChannelHandler> h : List.of(HttpEntry.class, BodySpool.class,
                    HeadGate.class, io.netty.handler.codec.http.HttpResponseEncoder.class)) {
                if (g.get(h) != null) {
                    g.remove(h);
                }
            }
            g.addLast("relay", new Relay(up, exchange, true));
            g.remove(StrictRequestDecoder.class); // what it holds goes on to the relay
            if (g.get(HttpEntry.IDLE) != null) {
                g.remove(HttpEntry.IDLE);
            }
            ((HttpClientCodec) up.pipeline().get(CODEC)).prepareUpgradeFrom(up.pipeline().context(CODEC));
            ctx.pipeline().replace(this, "relay", new Relay(guest, exchange, false)); // bytes after the 101 go on
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
                        guestLeft();
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
                    guestLeft();
                    ctx.close();
                } else if (last) {
                    if (done) {
                        return;
                    }
                    done = true;
                    exchange.end();
                    if (!ctx.isRemoved()) { // an HTTP/2 stream's channel may have closed and emptied its pipeline
                        ctx.pipeline().remove(this);
                    }
                    if (stream || !keepUpstream || !keepGuest || !bodySent) {
                        up.close(); // a stream ends here (reset, if the request's body is not all sent)
                    } else {
                        slot.keep(host + ":" + port, up, target);
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
            if (lastSeen && !done) {
                // the upstream ended (an HTTP/2 stream as its last frame was read; an HTTP/1.1 server closing after
                // a whole response) while the response's last write to the guest was still under way: the response
                // is whole, and ends as usual once the guest has it. Closing the guest here instead cut an HTTP/2
                // guest's stream with RST_STREAM CANCEL while its answer still waited for the guest's window (Java's
                // HttpClient in a guest under TCG saw "Stream cancelled": GuestClientsIT)
                if (lastWrite != null) {
                    channelReadComplete(ctx);
                }
                return;
            }
            exchange.end();
            if (stream && !responded && !done) {
                // reset by the server (RST_STREAM, or GOAWAY before it took this stream) before any answer
                responded = true;
                done = true;
                exchange.outcome("failed: " + host + " ended the HTTP/2 stream before answering");
                guest.writeAndFlush(Denials.response(HttpResponseStatus.BAD_GATEWAY, "kosa8: " + host
                        + " ended the HTTP/2 stream before answering\n")).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            if (!done) {
                // the upstream went away mid-response (a response without a length ends this way too)
                Relay.closeAfterFlush(guest);
            }
        }

        /** Sends the guest a 502 instead of the response, which it never sees any of. */
        private void refuseResponse(ChannelHandlerContext ctx, String why) {
            exchange.outcome("refused: " + why);
            exchange.end(); // logged before the guest can read the refusal
            responded = true;
            done = true;
            guest.writeAndFlush(Denials.response(HttpResponseStatus.BAD_GATEWAY, "kosa8: " + why + "\n"))
                    .addListener(ChannelFutureListener.CLOSE);
            ctx.close();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (!responded && login != null && cause instanceof io.netty.handler.codec.TooLongFrameException) {
                refuseResponse(ctx, "the token response from " + host + " is over "
                        + dev.kosa8.secrets.TokenResponses.MAX_BODY + " bytes, more than the broker reads for OAuth "
                        + "tokens; none of it was passed on");
                return;
            }
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
