package dev.kosa8.egress;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.SimpleChannelInboundHandler;
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
import java.util.List;
import java.util.Map;

/**
 * Upstream → guest, one HTTP object at a time, reading on while the guest keeps up: the response to one
 * {@link HttpForward}'s request. It rewrites an OAuth token response ({@link TokenExchange}), scrubs real keys out
 * of the response, turns a WebSocket's 101 into a relay of bytes, and at the response's end keeps or closes the
 * upstream ({@link UpstreamSlot}) and the guest's connection.
 */
final class ResponseRelay extends SimpleChannelInboundHandler<HttpObject> {
    private final HttpForward forward;
    private final Channel guest;
    private final String host;
    private final dev.kosa8.secrets.OAuthProvider login;
    private final dev.kosa8.secrets.KeyScrubber scrubber;
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

    ResponseRelay(HttpForward forward, Exchange exchange, Channel up, Upstreams.Target target) {
        super(false);
        this.forward = forward;
        this.guest = forward.guest();
        this.host = forward.host();
        this.login = forward.login();
        this.scrubber = forward.scrubber();
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
                    : TokenExchange.takeOut(full, login, forward.logins());
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
            if (forward.boundHost() && unreadable(res)) {
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
        if (msg instanceof HttpResponse res && forward.webSocket()
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
            HttpForward.HOP_BY_HOP.forEach(res.headers()::remove);
            keepGuest = forward.framed() || forward.guestKeepAlive()
                    && (io.netty.handler.codec.http.HttpUtil.isContentLengthSet(res)
                    || io.netty.handler.codec.http.HttpUtil.isTransferEncodingChunked(res)
                    || res.status().code() == 204 || res.status().code() == 304
                    || forward.request().method() == io.netty.handler.codec.http.HttpMethod.HEAD);
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
        ((HttpClientCodec) up.pipeline().get(HttpForward.CODEC)).prepareUpgradeFrom(up.pipeline().context(
                HttpForward.CODEC));
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
                if (stream || !keepUpstream || !keepGuest || !forward.bodySent()) {
                    up.close(); // a stream ends here (reset, if the request's body is not all sent)
                } else {
                    forward.slot().keep(host + ":" + forward.port(), up, target);
                }
                if (keepGuest) {
                    forward.next().run();
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

    /** A body still encoded after the decompressor: one it does not know (br, zstd), so unreadable to a scrubber. */
    private static boolean unreadable(HttpResponse res) {
        String enc = res.headers().get(HttpHeaderNames.CONTENT_ENCODING);
        return enc != null && !enc.isBlank() && !enc.strip().equalsIgnoreCase("identity");
    }
}
