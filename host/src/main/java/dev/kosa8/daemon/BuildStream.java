package dev.kosa8.daemon;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.NamedImage;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * An image build's progress to the CLI: after the HTTP upgrade, one JSON
 * object per line — {@code {"step", "total", "text", "cached"}} as each step
 * begins, {@code {"output"}} with a step's output when asked for
 * ({@code verbose}), {@code {"note"}} — and last {@code {"image": …}} or
 * {@code {"error", "suggestion", "kind", "exitCode"}}. The connection closing
 * first cancels the build: its sandbox is killed and nothing is listed.
 */
final class BuildStream {
    private static final ObjectMapper JSON = SandboxStore.JSON;

    private BuildStream() {
    }

    static void start(ChannelHandlerContext ctx, ImageBuilds builds, ImageBuilds.Request request, boolean verbose,
                      Consumer<String> log) {
        ctx.executor().execute(() -> {
            FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                    HttpResponseStatus.SWITCHING_PROTOCOLS);
            res.headers().set(HttpHeaderNames.UPGRADE, ApiHandler.UPGRADE)
                    .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.UPGRADE);
            ctx.writeAndFlush(res);
            ctx.pipeline().remove(HttpServerCodec.class);
            ctx.pipeline().remove(HttpObjectAggregator.class);
            ctx.channel().config().setAutoRead(true);
        });
        ImageBuilds.Build build = builds.start(request, new ImageBuilds.Progress() {
            @Override
            public void step(int n, int total, String text, boolean cached) {
                send(ctx, Map.of("step", n, "total", total, "text", text, "cached", cached));
            }

            @Override
            public void output(byte[] bytes) {
                if (verbose) {
                    send(ctx, Map.of("output", new String(bytes, StandardCharsets.UTF_8)));
                }
            }

            @Override
            public void note(String text) {
                send(ctx, Map.of("note", text));
            }
        });
        ctx.channel().closeFuture().addListener(f -> build.cancel());
        Thread.ofVirtual().name("image-build").start(() -> {
            try {
                NamedImage image = build.run();
                send(ctx, Map.of("image", image));
            } catch (KosaException e) {
                send(ctx, Map.of("error", e.getMessage(), "suggestion", e.suggestion(), "kind", e.kind().name(),
                        "exitCode", e.exitCode()));
            } catch (RuntimeException e) {
                log.accept("image build: internal error: " + e);
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("error", "internal error: " + e);
                m.put("suggestion", "see the daemon's log");
                m.put("kind", "INTERNAL");
                m.put("exitCode", 70);
                send(ctx, m);
            } finally {
                ctx.channel().eventLoop().execute(() -> ctx.writeAndFlush(Unpooled.EMPTY_BUFFER)
                        .addListener(ChannelFutureListener.CLOSE));
            }
        });
    }

    private static void send(ChannelHandlerContext ctx, Object value) {
        if (!ctx.channel().isActive()) {
            return;
        }
        try {
            byte[] line = JSON.writeValueAsBytes(value);
            byte[] out = java.util.Arrays.copyOf(line, line.length + 1);
            out[line.length] = '\n';
            ctx.writeAndFlush(Unpooled.wrappedBuffer(out));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
