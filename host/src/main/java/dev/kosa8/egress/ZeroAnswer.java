package dev.kosa8.egress;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An HTTP server's whole work for warming the network path: the first bytes a connection sends are taken as its
 * request, and the answer is {@code bytes} zeros behind a {@code 200} head, written as the connection takes them;
 * then the connection ends. For {@link NetRehearsal}, behind a template's link: nothing a sandbox reaches.
 */
@ChannelHandler.Sharable
final class ZeroAnswer extends ChannelInboundHandlerAdapter {
    /** Bytes written per call: a network window slot's worth, from one buffer no write releases. */
    private static final int CHUNK = 256 << 10;
    private static final ByteBuf ZEROS = Unpooled.unreleasableBuffer(Unpooled.directBuffer(CHUNK).writeZero(CHUNK));
    private static final AttributeKey<long[]> LEFT = AttributeKey.valueOf("kosa8.zero-answer.left");

    private final long bytes;
    private final AtomicLong served;

    /** @param served counts the body bytes the connections took, over all of them */
    ZeroAnswer(long bytes, AtomicLong served) {
        this.bytes = bytes;
        this.served = served;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ReferenceCountUtil.release(msg);
        if (ctx.channel().attr(LEFT).get() != null) {
            return; // the rest of the request: nothing in it matters
        }
        ctx.channel().attr(LEFT).set(new long[] {bytes});
        ctx.write(Unpooled.copiedBuffer("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                + "Content-Length: " + bytes + "\r\nConnection: close\r\n\r\n", StandardCharsets.US_ASCII));
        pump(ctx);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        pump(ctx);
        ctx.fireChannelWritabilityChanged();
    }

    /** Writes while the connection takes more; at the end, closes it once the last write is out. */
    private void pump(ChannelHandlerContext ctx) {
        long[] left = ctx.channel().attr(LEFT).get();
        if (left == null || left[0] < 0) {
            return;
        }
        while (left[0] > 0 && ctx.channel().isWritable()) {
            int n = (int) Math.min(CHUNK, left[0]);
            left[0] -= n;
            ctx.write(ZEROS.slice(0, n)).addListener(f -> {
                if (f.isSuccess()) {
                    served.addAndGet(n);
                }
            });
        }
        if (left[0] == 0) {
            left[0] = -1;
            ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.flush();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
