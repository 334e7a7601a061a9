package dev.kosa8.egress;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;

/**
 * The answers a refused guest gets: an HTTP response whose body says what was
 * refused and the host-side command that would allow it (an agent reads it
 * and can ask its user), or a TLS alert where no HTTP can be spoken.
 */
final class Denials {
    /** A plaintext TLS alert record: fatal, access_denied (49). */
    private static final byte[] TLS_ACCESS_DENIED = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x31};

    private Denials() {
    }

    static FullHttpResponse forbidden(String sandboxId, String host, String reason) {
        String hint = host == null ? "" : "To allow it, run on the host: kosa8 allow " + sandboxId + " " + host + "\n";
        return response(HttpResponseStatus.FORBIDDEN, "kosa8: blocked by the sandbox's network policy: " + reason
                + "\n" + hint);
    }

    /**
     * The answer to a request the broker ends with {@code status}: a 403 is a {@link #forbidden} refusal, naming
     * the command that would allow {@code allowHost} when there is one; any other status says {@code reason}.
     */
    static FullHttpResponse ending(HttpResponseStatus status, String sandboxId, String allowHost, String reason) {
        return status.equals(HttpResponseStatus.FORBIDDEN) ? forbidden(sandboxId, allowHost, reason)
                : response(status, "kosa8: " + reason + "\n");
    }

    /**
     * The answer when an allowed host cannot be dialed: a name that resolves only to refused addresses is a
     * refusal (403, and no allow hint: the host is allowed already); a name the host's resolver does not know, or
     * whose lookup failed, is a gateway failure (502) that says so, and what to check.
     */
    static FullHttpResponse unreachable(String sandboxId, Upstreams.Refused refused) {
        if (!refused.unresolved()) {
            return forbidden(sandboxId, null, refused.getMessage());
        }
        return response(HttpResponseStatus.BAD_GATEWAY, "kosa8: the sandbox's network allows this host, but the "
                + "host machine cannot reach it: " + refused.getMessage() + "\nCheck the spelling, and the host "
                + "machine's network and DNS: a sandbox reaches only what its host can.\n");
    }

    /**
     * An answer the broker makes itself, marked so a client can tell it from the server's: {@code
     * X-Kosa8-Denied: policy} on a 4xx (the broker refused the request), {@code X-Kosa8-Error: upstream} on a 5xx
     * (the upstream could not be reached or verified, or its answer could not be passed on).
     */
    static FullHttpResponse response(HttpResponseStatus status, String text) {
        ByteBuf body = Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
        FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
        res.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes())
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        if (status.code() >= 500) {
            res.headers().set("X-Kosa8-Error", "upstream");
        } else {
            res.headers().set("X-Kosa8-Denied", "policy");
        }
        return res;
    }

    /**
     * Ends a connection after a refusal without resetting it: closes the
     * sending side, then reads and drops what the guest still sends, for a
     * moment, before closing. Closing with unread input would make the
     * kernel reset the connection, and the client would report a reset
     * instead of the answer that says why.
     */
    static void lingerClose(io.netty.channel.Channel ch) {
        if (ch instanceof io.netty.handler.codec.http2.Http2StreamChannel && ch.isActive()) {
            // an HTTP/2 stream: the answer ended it on our side; what the guest still sends on it is dropped (by
            // HeadGate) until it ends its side, or for a moment, and the connection's other streams go on
            ch.eventLoop().schedule(() -> ch.close(), 2, java.util.concurrent.TimeUnit.SECONDS);
            return;
        }
        if (!(ch instanceof io.netty.channel.socket.DuplexChannel d) || !ch.isActive()) {
            ch.close();
            return;
        }
        ch.pipeline().addFirst("discard", new io.netty.channel.ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
                io.netty.util.ReferenceCountUtil.release(msg);
            }
        });
        ch.config().setAutoRead(true);
        d.shutdownOutput();
        ch.eventLoop().schedule(() -> ch.close(), 2, java.util.concurrent.TimeUnit.SECONDS);
    }

    static ByteBuf tlsAccessDenied() {
        return Unpooled.wrappedBuffer(TLS_ACCESS_DENIED);
    }
}
