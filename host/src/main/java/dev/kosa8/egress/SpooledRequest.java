package dev.kosa8.egress;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpChunkedInput;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.stream.ChunkedWriteHandler;
import java.util.Optional;

/**
 * A whole request whose body is on disk ({@link BodySpool}): to the handlers that judge it a
 * {@link FullHttpRequest} with no content in memory, to {@link HttpForward} a head and a file it streams upstream
 * as fast as the upstream takes it. Its own (empty) content carries the reference count: the last release closes
 * the file, so every path that releases a request, as every path already must, frees its spool.
 */
final class SpooledRequest extends DefaultFullHttpRequest {
    /** Bytes read from the file per write upstream. */
    static final int CHUNK = 64 * 1024;

    private final SpoolFile spool;
    private final BodyScan scan;
    private final SecretBindings scannedWith;

    SpooledRequest(HttpRequest head, ByteBuf empty, SpoolFile spool, BodyScan scan, SecretBindings scannedWith) {
        super(head.protocolVersion(), head.method(), head.uri(), empty, head.headers(),
                io.netty.handler.codec.http.DefaultHttpHeadersFactory.trailersFactory().newHeaders());
        this.spool = spool;
        this.scan = scan;
        this.scannedWith = scannedWith;
    }

    /** The file the body is in. */
    SpoolFile spool() {
        return spool;
    }

    /** The body's length: on disk for a spooled request, else its content's. */
    static long bodyLength(FullHttpRequest r) {
        return r instanceof SpooledRequest s ? s.spool.size() : r.content().readableBytes();
    }

    /**
     * The name of a secret whose placeholder the body carries, though it may not go where the request goes; null
     * when the secrets changed while the body arrived, so it was searched for other ones than those in force now.
     */
    Optional<String> misplaced(SecretBindings now) {
        return now == scannedWith ? scan.found() : null;
    }

    /**
     * Writes {@code req} to {@code up}: a spooled one as its head, then its file read {@link #CHUNK} at a time as
     * {@code up} can take it (Netty's {@link ChunkedWriteHandler}, which waits while the channel is not writable:
     * a slow upstream holds the file back instead of the daemon's heap), each chunk read on the spool's threads
     * ({@link SpoolReader}), released once written or failed.
     *
     * @param after    the name of the handler the chunked writer goes after (the HTTP codec)
     * @param bodySent told, on {@code up}'s event loop, when the whole body is written
     * @return the head's write for a spooled request (the response may start before the body ends), the whole
     *         request's otherwise
     */
    static ChannelFuture write(Channel up, FullHttpRequest req, String after, Runnable bodySent) {
        if (!(req instanceof SpooledRequest s)) {
            return up.writeAndFlush(req).addListener((ChannelFutureListener) f -> bodySent.run());
        }
        if (up.pipeline().get(ChunkedWriteHandler.class) == null) {
            up.pipeline().addAfter(after, "chunks", new ChunkedWriteHandler());
        }
        ChannelFuture head = up.write(new DefaultHttpRequest(s.protocolVersion(), s.method(), s.uri(), s.headers()));
        ChunkedWriteHandler chunks = up.pipeline().get(ChunkedWriteHandler.class);
        HttpChunkedInput body = new HttpChunkedInput(new SpoolReader(s.spool, s.spool.size(), CHUNK,
                () -> up.eventLoop().execute(chunks::resumeTransfer)));
        up.writeAndFlush(body).addListener((ChannelFutureListener) f -> {
            s.release();
            if (f.isSuccess()) {
                bodySent.run();
            } else {
                f.channel().close();
            }
        });
        return head;
    }

    @Override
    public boolean release() {
        return released(super.release());
    }

    @Override
    public boolean release(int decrement) {
        return released(super.release(decrement));
    }

    private boolean released(boolean last) {
        if (last) {
            spool.close();
        }
        return last;
    }

    @Override
    public SpooledRequest retain() {
        super.retain();
        return this;
    }

    @Override
    public SpooledRequest retain(int increment) {
        super.retain(increment);
        return this;
    }

    @Override
    public SpooledRequest touch() {
        super.touch();
        return this;
    }

    @Override
    public SpooledRequest touch(Object hint) {
        super.touch(hint);
        return this;
    }
}
