package dev.kosa8.e2b;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;

/**
 * One connection to the listener: each request gets a virtual thread of its own ({@link E2bRouter#handle}) with
 * its body streamed to it, so a long Connect stream or a large upload never holds the event loop.
 */
final class E2bHandler extends ChannelInboundHandlerAdapter {
    private final E2bRouter router;
    private final Object writable = new Object();
    private RequestBody body;

    E2bHandler(E2bRouter router) {
        this.router = router;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof HttpRequest req) {
                if (req.decoderResult().isFailure()) {
                    var r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.BAD_REQUEST,
                            Unpooled.wrappedBuffer(Exchange.utf8("{\"code\":400,\"message\":\"malformed HTTP request\"}")));
                    r.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json");
                    HttpUtil.setContentLength(r, r.content().readableBytes());
                    ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
                    body = null;
                    return;
                }
                body = new RequestBody(ctx.channel());
                Exchange x = new Exchange(ctx.channel(), req.method(), req.uri(), req.headers(),
                        HttpUtil.isKeepAlive(req), body, writable);
                Thread.ofVirtual().name("e2b").start(() -> router.handle(x));
            }
            if (msg instanceof HttpContent c && body != null) {
                ByteBuf b = c.content();
                if (b.isReadable()) {
                    body.offer(ByteBufUtil.getBytes(b));
                }
                if (msg instanceof LastHttpContent) {
                    body.end();
                }
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        synchronized (writable) {
            writable.notifyAll();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (body != null) {
            body.broken();
        }
        synchronized (writable) {
            writable.notifyAll();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
