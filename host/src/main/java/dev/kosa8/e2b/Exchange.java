package dev.kosa8.e2b;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;

/**
 * One request and its answer, on the request's own (virtual) thread: the body read as a stream, the answer
 * written whole or as a stream whose writes wait while the client reads slowly. A connection whose request body
 * was not read to its end is closed after the answer, so no unread bytes are taken for the next request.
 */
final class Exchange {
    final HttpMethod method;
    final String path;
    final QueryStringDecoder query;
    final HttpHeaders headers;
    final RequestBody body;
    private final Channel channel;
    private final boolean keepAlive;
    private final Object writable;
    private boolean started;
    /** What of a request's body left unread is read and dropped to keep the connection; past it, it is closed. */
    static final int DRAIN_BYTES = 64 * 1024;
    static final long DRAIN_MILLIS = 2000;

    Exchange(Channel channel, HttpMethod method, String uri, HttpHeaders headers, boolean keepAlive,
             RequestBody body, Object writable) {
        this.channel = channel;
        this.method = method;
        this.query = new QueryStringDecoder(uri);
        this.path = query.path();
        this.headers = headers;
        this.keepAlive = keepAlive;
        this.body = body;
        this.writable = writable;
    }

    String param(String name) {
        var v = query.parameters().get(name);
        return v == null || v.isEmpty() ? null : v.getFirst();
    }

    boolean open() {
        return channel.isActive();
    }

    boolean started() {
        return started;
    }

    void json(int status, Object value) {
        bytes(status, "application/json", value instanceof byte[] b ? b : Json.write(value));
    }

    void bytes(int status, String contentType, byte[] content) {
        var r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status),
                Unpooled.wrappedBuffer(content));
        if (content.length > 0 || status != 204) {
            r.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        }
        HttpUtil.setContentLength(r, content.length);
        started = true;
        finish(channel.writeAndFlush(r));
    }

    void empty(int status) {
        var r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status));
        HttpUtil.setContentLength(r, 0);
        started = true;
        finish(channel.writeAndFlush(r));
    }

    /** Starts a streamed answer: chunked, or of a known length when {@code length} is not negative. */
    void start(int status, String contentType, long length, HttpHeaders extra) {
        var r = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        if (extra != null) {
            r.headers().add(extra);
        }
        if (length >= 0) {
            HttpUtil.setContentLength(r, length);
        } else {
            r.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        }
        started = true;
        channel.writeAndFlush(r);
    }

    /** Writes part of a streamed answer, waiting while the client has not read what was written before. */
    void write(byte[] bytes) {
        awaitWritable();
        channel.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(bytes)));
    }

    /** Ends a streamed answer. */
    void end() {
        finish(channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT));
    }

    private void finish(io.netty.channel.ChannelFuture f) {
        if (!keepAlive || !body.drain(DRAIN_BYTES, DRAIN_MILLIS)) {
            f.addListener(ChannelFutureListener.CLOSE);
        }
    }

    /** Closes the connection, for an answer that cannot be completed. */
    void abort() {
        channel.close();
    }

    private void awaitWritable() {
        synchronized (writable) {
            while (!channel.isWritable() && channel.isActive()) {
                try {
                    writable.wait(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
