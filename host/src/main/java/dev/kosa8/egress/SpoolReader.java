package dev.kosa8.egress;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.stream.ChunkedInput;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/**
 * A spooled body read back for its upstream ({@link SpooledRequest#write}) on the spool's threads: each chunk is read
 * there while the one before is being sent, and until it is in, {@link #readChunk} answers "not yet" (null), which
 * Netty's chunked writer takes as a pause until {@code resume} is called. The event loop never waits on the disk.
 */
final class SpoolReader implements ChunkedInput<ByteBuf> {
    private final SpoolFile file;
    private final long length;
    private final int chunk;
    private final Runnable resume;
    private long requested;
    private long delivered;
    /** The chunk being read, or read and not yet taken; null when none is. */
    private CompletableFuture<ByteBuf> next;
    private boolean closed;

    /**
     * @param resume tells the chunked writer to try again, from any thread, and never in line: a chunk read before
     *               {@link #readChunk} returns would otherwise start the writer again inside it, which then sends
     *               the chunks after this one before it (seen: a body's 64 KiB chunks swapped)
     */
    SpoolReader(SpoolFile file, long length, int chunk, Runnable resume) {
        this.file = file;
        this.length = length;
        this.chunk = chunk;
        this.resume = resume;
    }

    @Override
    public boolean isEndOfInput() {
        return delivered >= length;
    }

    @Override
    @Deprecated
    public ByteBuf readChunk(ChannelHandlerContext ctx) throws Exception {
        return readChunk(ctx.alloc());
    }

    @Override
    public ByteBuf readChunk(ByteBufAllocator alloc) throws Exception {
        if (isEndOfInput()) {
            return null;
        }
        if (next == null) {
            start(alloc);
        }
        if (!next.isDone()) {
            return null; // resumed when it is in
        }
        ByteBuf b;
        try {
            b = next.join();
        } catch (java.util.concurrent.CompletionException e) {
            next = null;
            throw new IOException("cannot read the spooled request body back: " + e.getCause().getMessage(),
                    e.getCause());
        }
        next = null;
        delivered += b.readableBytes();
        if (!isEndOfInput()) {
            start(alloc); // the next chunk is read while this one is sent
        }
        return b;
    }

    private void start(ByteBufAllocator alloc) {
        long at = requested;
        int len = (int) Math.min(chunk, length - at);
        requested += len;
        next = CompletableFuture.supplyAsync(() -> {
            ByteBuf b = alloc.buffer(len, len);
            try {
                java.nio.ByteBuffer into = b.nioBuffer(0, len); // its own, not the buffer's shared internal one
                long pos = at;
                while (into.hasRemaining()) {
                    int n = file.channel().read(into, pos);
                    if (n < 0) {
                        throw new IOException("the spool file ended at " + pos + " of " + length + " bytes");
                    }
                    pos += n;
                }
                b.writerIndex(len);
                return b;
            } catch (IOException | RuntimeException e) {
                b.release();
                throw new java.util.concurrent.CompletionException(e);
            }
        }, file.io());
        next.whenComplete((b, e) -> resume.run());
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (next != null) {
            next.thenAccept(ByteBuf::release); // a chunk read but never sent
            next = null;
        }
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public long progress() {
        return delivered;
    }
}
