package dev.kosa8.egress;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.time.Instant;

/**
 * Gathers each request of the guest whole before {@link HttpEntry} judges it, as Netty's aggregator did, but
 * without its bound: a body up to {@link Broker#MAX_BODY} is held in memory, a longer one goes to a file of the
 * sandbox's spool ({@link SpoolBudget}) as it arrives and leaves as a {@link SpooledRequest}, searched for
 * misplaced placeholders on the way in ({@link BodyScan}). Nothing of a request goes upstream before all of it
 * has been judged; the daemon holds at most {@link Broker#MAX_BODY} of one body in memory, and its disk at most
 * {@link SpoolLimits}. A body past those gets 413, saying which bound, and the connection (or HTTP/2 stream) ends.
 *
 * <p>{@code Expect: 100-continue} is answered here, as the aggregator did: 100 when the declared length is within
 * the bound, else 413 before the body is sent. A head {@link HeadGate} refused comes with no body.
 */
final class BodySpool extends ChannelInboundHandlerAdapter {
    private static final int MAX_COMPONENTS = 1024;

    private final Broker broker;
    private final Listener listener;
    /** The server name of an intercepted connection, else null: it picks which placeholders are misplaced. */
    private final String tlsHost;
    private final int tlsPort;
    /** A body longer than this goes to disk: {@link Broker#MAX_BODY}; the fuzz test lowers it. */
    private final int memoryBound;
    private HttpRequest head;
    private CompositeByteBuf memory;
    private SpoolFile file;
    private BodyScan scan;
    private SecretBindings scannedWith;
    private long length;
    /** A refused body's rest, or what follows a malformed request, is dropped. */
    private boolean discarding;
    /** The guest is not read until the spool's writer catches up ({@link SpoolFile#AHEAD}). */
    private volatile boolean paused;
    /** A whole spooled body whose last writes are under way: it goes on once they are done. */
    private SpoolFile finishing;
    /** What the guest sent after that body meanwhile, passed on after it. */
    private final java.util.ArrayDeque<Object> held = new java.util.ArrayDeque<>();
    private ChannelHandlerContext ctx;

    BodySpool(Broker broker, Listener listener, String tlsHost, int tlsPort) {
        this(broker, listener, tlsHost, tlsPort, Broker.MAX_BODY);
    }

    BodySpool(Broker broker, Listener listener, String tlsHost, int tlsPort, int memoryBound) {
        this.memoryBound = memoryBound;
        this.broker = broker;
        this.listener = listener;
        this.tlsHost = tlsHost;
        this.tlsPort = tlsPort;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (finishing != null) {
            held.add(msg);
            return;
        }
        if (discarding) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof FullHttpRequest full) {
            ctx.fireChannelRead(full); // whole already (an HTTP/2 stream's HEADERS with END_STREAM, a decoder failure)
            return;
        }
        if (msg instanceof HttpRequest req) {
            begin(ctx, req);
            return;
        }
        if (!(msg instanceof HttpContent c) || head == null) {
            ReferenceCountUtil.release(msg); // content with no request before it: the decoder never makes it
            return;
        }
        try {
            if (c.decoderResult().isFailure()) {
                HttpRequest h = head;
                free();
                failed(ctx, h, c.decoderResult());
                return;
            }
            if (!append(ctx, c.content()) || !(c instanceof LastHttpContent last)) {
                return;
            }
            finish(ctx, last);
        } finally {
            c.release();
        }
    }

    private void begin(ChannelHandlerContext ctx, HttpRequest req) {
        free();
        if (req.decoderResult().isFailure()) {
            failed(ctx, req, req.decoderResult());
            return;
        }
        String expect = req.headers().get(HttpHeaderNames.EXPECT);
        if (expect != null && req.protocolVersion().compareTo(HttpVersion.HTTP_1_1) >= 0
                && !"100-continue".equalsIgnoreCase(expect)) {
            refuse(ctx, req, HttpResponseStatus.EXPECTATION_FAILED, "the broker knows only Expect: 100-continue");
            return;
        }
        long declared;
        try {
            declared = HttpUtil.getContentLength(req, -1L);
        } catch (NumberFormatException e) {
            refuse(ctx, req, HttpResponseStatus.BAD_REQUEST, "a Content-Length that is not a number");
            return;
        }
        SpoolLimits limits = broker.spool().limits();
        if (declared > limits.perRequest()) {
            refuse(ctx, req, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, tooLarge(declared, limits));
            return;
        }
        if (declared > memoryBound && declared > limits.perSandbox() - broker.spool().used()) {
            refuse(ctx, req, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, sandboxFull(limits));
            return;
        }
        if (HttpUtil.is100ContinueExpected(req)) {
            ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE))
                    .addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
        }
        req.headers().remove(HttpHeaderNames.EXPECT); // answered here: the upstream gets the body at once
        head = req;
        length = 0;
        memory = ctx.alloc().compositeBuffer(MAX_COMPONENTS);
        if (declared > memoryBound) {
            spill(ctx); // a length past memory's bound goes to disk from its first byte
        }
    }

    /** Passes on a request the decoder could not read, for the entry to answer (400, 413, 431...); drops the rest. */
    private void failed(ChannelHandlerContext ctx, HttpRequest h, DecoderResult why) {
        discarding = true;
        FullHttpRequest r = new DefaultFullHttpRequest(h.protocolVersion(), h.method(), h.uri(), Unpooled.EMPTY_BUFFER,
                h.headers(), io.netty.handler.codec.http.DefaultHttpHeadersFactory.trailersFactory().newHeaders());
        r.setDecoderResult(why);
        ctx.fireChannelRead(r);
    }

    /** @return false when the request was refused (and its state freed) */
    private boolean append(ChannelHandlerContext ctx, ByteBuf data) {
        if (!data.isReadable()) {
            return true;
        }
        length += data.readableBytes();
        SpoolLimits limits = broker.spool().limits();
        if (length > limits.perRequest()) {
            refuse(ctx, head, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, tooLarge(length, limits));
            return false;
        }
        if (file == null && length > memoryBound && !spill(ctx)) {
            return false;
        }
        if (file == null) {
            memory.addComponent(true, data.retain());
            return true;
        }
        scan.feed(data);
        if (scan.found().isPresent()) {
            return true; // refused once whole, with the entry's answer; nothing more of it is kept
        }
        if (file.failure() != null) {
            refuse(ctx, head, HttpResponseStatus.INSUFFICIENT_STORAGE, cannotKeep(file.failure()));
            return false;
        }
        ByteBuf mine = data.retain();
        if (!file.append(mine, written(file))) {
            mine.release();
            refuse(ctx, head, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, sandboxFull(limits));
            return false;
        }
        holdBackIfBehind();
        return true;
    }

    private String cannotKeep(Exception e) {
        return "cannot keep the request body in " + broker.spool().dir() + " while it is judged: " + e.getMessage();
    }

    /** The spool's writer is {@link SpoolFile#AHEAD} behind: the guest is not read until it catches up. */
    private void holdBackIfBehind() {
        if (!paused && file.pending() > SpoolFile.AHEAD) {
            paused = true;
            ctx.channel().config().setAutoRead(false);
        }
    }

    /** Told on the spool's thread after each write to {@code f}: reads the guest again once the writer caught up. */
    private Runnable written(SpoolFile f) {
        return () -> {
            if (paused && f.pending() <= SpoolFile.AHEAD / 2) {
                onLoop(() -> {
                    if (paused && f == file && f.pending() <= SpoolFile.AHEAD / 2) {
                        paused = false;
                        ctx.channel().config().setAutoRead(true);
                    }
                });
            }
        };
    }

    private void onLoop(Runnable r) {
        if (ctx.executor().inEventLoop()) {
            r.run();
        } else {
            ctx.executor().execute(r);
        }
    }

    /** Moves the body so far from memory to a new spool file, searching it; false when refused. */
    private boolean spill(ChannelHandlerContext ctx) {
        scannedWith = broker.secrets();
        scan = new BodyScan(scannedWith.misplacedDetector(tlsHost, tlsPort, tlsHost != null).orElse(null));
        try {
            file = broker.spool().open();
            scan.feed(memory);
            if (!file.append(memory, written(file))) { // takes memory, once it is written
                refuse(ctx, head, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, sandboxFull(broker.spool().limits()));
                return false;
            }
        } catch (IOException | RuntimeException e) {
            refuse(ctx, head, HttpResponseStatus.INSUFFICIENT_STORAGE, cannotKeep(e));
            return false;
        }
        memory = null;
        holdBackIfBehind();
        return true;
    }

    private void finish(ChannelHandlerContext ctx, LastHttpContent last) {
        HttpRequest h = head;
        FullHttpRequest whole;
        if (file != null) {
            // judged once its last bytes are on disk; meanwhile the guest is not read, and what it sent is held
            SpoolFile f = file;
            BodyScan sc = scan;
            SecretBindings with = scannedWith;
            io.netty.handler.codec.http.HttpHeaders trailers = last.trailingHeaders().copy();
            long len = length;
            file = null;
            free();
            finishing = f;
            ctx.channel().config().setAutoRead(false);
            f.written().whenComplete((v, e) -> onLoop(() -> spooled(f, h, sc, with, trailers, len)));
            return;
        } else {
            whole = new DefaultFullHttpRequest(h.protocolVersion(), h.method(), h.uri(), memory, h.headers(),
                    io.netty.handler.codec.http.DefaultHttpHeadersFactory.trailersFactory().newHeaders());
            memory = null;
        }
        whole.trailingHeaders().set(last.trailingHeaders());
        if (!HttpUtil.isContentLengthSet(whole)) {
            whole.headers().set(HttpHeaderNames.CONTENT_LENGTH, String.valueOf(length));
        }
        free();
        ctx.fireChannelRead(whole);
    }

    /** The last writes of {@code f} are done: the whole request goes on, then what the guest sent meanwhile. */
    private void spooled(SpoolFile f, HttpRequest h, BodyScan sc, SecretBindings with,
                         io.netty.handler.codec.http.HttpHeaders trailers, long len) {
        if (finishing != f) {
            f.close(); // the connection or stream ended meanwhile
            return;
        }
        finishing = null;
        if (f.failure() != null) {
            f.close();
            refuse(ctx, h, HttpResponseStatus.INSUFFICIENT_STORAGE, cannotKeep(f.failure()));
        } else {
            FullHttpRequest whole = new SpooledRequest(h, ctx.alloc().buffer(0), f, sc, with);
            whole.trailingHeaders().set(trailers);
            if (!HttpUtil.isContentLengthSet(whole)) {
                whole.headers().set(HttpHeaderNames.CONTENT_LENGTH, String.valueOf(len));
            }
            ctx.fireChannelRead(whole);
        }
        while (!held.isEmpty() && finishing == null) {
            channelRead(ctx, held.poll());
        }
    }

    private String tooLarge(long size, SpoolLimits limits) {
        return "the request body " + (size > limits.perRequest() ? "is over " : "has ") + limits.perRequest()
                + " bytes (" + (limits.perRequest() >> 20) + " MiB), the most the broker holds for one request while "
                + "it judges it; nothing was sent upstream";
    }

    private String sandboxFull(SpoolLimits limits) {
        return "the request bodies the broker of this sandbox holds while it judges them would pass "
                + limits.perSandbox() + " bytes (" + (limits.perSandbox() >> 20) + " MiB) with this one; nothing was "
                + "sent upstream: send it again once other uploads are done";
    }

    /** Answers {@code status} itself, logs why, and ends the connection (or stream), dropping the rest. */
    private void refuse(ChannelHandlerContext ctx, HttpRequest req, HttpResponseStatus status, String why) {
        free();
        discarding = true;
        broker.audit().write(new AuditEvent(Instant.now(), listener.label(), tlsHost, tlsHost == null ? null : tlsPort,
                req.method().name(), tlsHost == null ? null : AuditEvent.trimPath(req.uri()), null, "deny",
                AuditEvent.redact(why), null, null, null));
        ctx.writeAndFlush(Denials.ending(status, broker.sandboxId(), null, why))
                .addListener((ChannelFutureListener) f -> Denials.lingerClose(f.channel()));
    }

    private void free() {
        head = null;
        if (memory != null) {
            memory.release();
            memory = null;
        }
        if (file != null) {
            file.close();
            file = null;
        }
        scan = null;
        scannedWith = null;
        if (paused) {
            paused = false;
            ctx.channel().config().setAutoRead(true);
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        free(); // the connection or stream ended mid-body, or the pipeline became a tunnel
        if (finishing != null) {
            finishing.close();
            finishing = null;
        }
        while (!held.isEmpty()) {
            ReferenceCountUtil.release(held.poll());
        }
    }
}
