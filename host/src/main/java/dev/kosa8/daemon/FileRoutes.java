package dev.kosa8.daemon;

import dev.kosa8.files.FileOpException;
import dev.kosa8.files.FileWatch;
import dev.kosa8.files.Listing;
import dev.kosa8.files.WatchBatch;
import dev.kosa8.files.WriteOptions;
import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.FileStat;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.WatchEvent;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * {@code /v1/sandboxes/ID/files…}: a running sandbox's guest files through {@link SandboxFiles} (docs/api.md,
 * "Files"). A file operation's failure answers with its errno-like code and the HTTP status it maps to.
 */
final class FileRoutes {
    /** The most a content GET returns; larger files are read with {@code kosa8 cp}. */
    static final int MAX_CONTENT = 16 << 20;
    /** The longest a watch poll waits for an event. */
    static final Duration MAX_WAIT = Duration.ofSeconds(60);
    /** The most events one poll returns. */
    static final int MAX_EVENTS = 10_000;

    private final SandboxFiles files;

    FileRoutes(SandboxFiles files) {
        this.files = files;
    }

    /**
     * @param p       the path's parts: {@code v1 sandboxes ID files [stat|list|mkdir|rename|content|watches [WID]]}
     * @param respond answers with a status and a value to write as JSON
     */
    void route(ChannelHandlerContext ctx, Sandbox s, HttpMethod m, List<String> p, QueryStringDecoder q, byte[] body,
               BiConsumer<HttpResponseStatus, Object> respond) {
        try {
            files(ctx, s, m, p, q, body, respond);
        } catch (FileOpException e) {
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("error", e.getMessage());
            v.put("code", e.code().name());
            v.put("kind", "FILE");
            v.put("suggestion", "");
            respond.accept(status(e.code()), v);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KosaException(KosaException.Kind.INTERNAL, "interrupted", "");
        }
    }

    private void files(ChannelHandlerContext ctx, Sandbox s, HttpMethod m, List<String> p, QueryStringDecoder q,
                       byte[] body, BiConsumer<HttpResponseStatus, Object> respond) throws InterruptedException {
        String what = p.size() > 4 ? p.get(4) : "";
        if (p.size() > (what.equals("watches") ? 6 : 5)) {
            throw notFound();
        }
        switch (what) {
            case "" -> {
                expect(m, HttpMethod.DELETE);
                files.remove(s, path(q, "path"), flag(q, "recursive"));
                respond.accept(HttpResponseStatus.OK, Map.of("removed", path(q, "path")));
            }
            case "stat" -> {
                expect(m, HttpMethod.GET);
                respond.accept(HttpResponseStatus.OK, view(files.stat(s, path(q, "path"), flag(q, "follow"))));
            }
            case "list" -> {
                expect(m, HttpMethod.GET);
                int limit = files.files().limits().listEntries();
                Listing l = files.list(s, path(q, "path"), (int) number(q, "depth", 1, Integer.MAX_VALUE),
                        (int) number(q, "max", limit, limit));
                respond.accept(HttpResponseStatus.OK, Map.of("entries", l.entries().stream().map(FileRoutes::view)
                        .toList(), "truncated", l.truncated()));
            }
            case "mkdir" -> {
                expect(m, HttpMethod.POST);
                respond.accept(HttpResponseStatus.CREATED, view(files.makeDir(s, path(q, "path"),
                        text(q, "user"), flag(q, "existOk"))));
            }
            case "rename" -> {
                expect(m, HttpMethod.POST);
                respond.accept(HttpResponseStatus.OK, view(files.rename(s, path(q, "from"), path(q, "to"),
                        flag(q, "replace"))));
            }
            case "content" -> content(ctx, s, m, q, body, respond);
            case "watches" -> watches(s, m, p, q, respond);
            default -> throw notFound();
        }
    }

    private void content(ChannelHandlerContext ctx, Sandbox s, HttpMethod m, QueryStringDecoder q, byte[] body,
                         BiConsumer<HttpResponseStatus, Object> respond) {
        if (m == HttpMethod.GET) {
            byte[] bytes = files.read(s, path(q, "path"), MAX_CONTENT);
            FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                    Unpooled.wrappedBuffer(bytes));
            res.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_OCTET_STREAM)
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length)
                    .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        expect(m, HttpMethod.PUT);
        String mode = text(q, "mode");
        int bits;
        try {
            bits = mode.isEmpty() ? 0644 : Integer.parseInt(mode, 8);
        } catch (NumberFormatException e) {
            throw new FileOpException(Message.ErrorCode.INVALID, "mode '" + mode + "' is not octal, as 644");
        }
        WriteOptions o = new WriteOptions(bits, text(q, "user"), !"false".equals(text(q, "parents")));
        respond.accept(HttpResponseStatus.OK, view(files.write(s, path(q, "path"), body, o)));
    }

    private void watches(Sandbox s, HttpMethod m, List<String> p, QueryStringDecoder q,
                         BiConsumer<HttpResponseStatus, Object> respond) throws InterruptedException {
        if (p.size() == 5 && m == HttpMethod.POST) {
            respond.accept(HttpResponseStatus.CREATED, view(files.watch(s, path(q, "path"), flag(q, "recursive"))));
        } else if (p.size() == 5 && m == HttpMethod.GET) {
            respond.accept(HttpResponseStatus.OK, files.watches(s).stream().map(FileRoutes::view).toList());
        } else if (p.size() == 6 && m == HttpMethod.GET) {
            FileWatch w = files.watch(s, p.get(5));
            WatchBatch b = files.poll(s, w.id(), (int) number(q, "max", 1000, MAX_EVENTS),
                    Duration.ofSeconds(number(q, "wait", 0, MAX_WAIT.toSeconds())));
            Map<String, Object> v = new LinkedHashMap<>(view(w));
            v.put("events", b.events().stream().map(e -> Map.of("type", e.kind().name(), "path", e.path()))
                    .toList());
            v.put("ended", b.ended());
            v.put("reason", b.reason());
            respond.accept(HttpResponseStatus.OK, v);
        } else if (p.size() == 6 && m == HttpMethod.DELETE) {
            files.unwatch(s, p.get(5));
            respond.accept(HttpResponseStatus.OK, Map.of("removed", p.get(5)));
        } else {
            throw notFound();
        }
    }

    /** A stat as the API shows it (docs/api.md). */
    static Map<String, Object> view(FileStat f) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("path", f.path());
        v.put("name", f.name());
        v.put("type", f.type().name().toLowerCase(java.util.Locale.ROOT));
        v.put("size", f.size());
        v.put("mode", String.format("%04o", f.mode()));
        v.put("uid", f.uid());
        v.put("gid", f.gid());
        v.put("owner", f.owner());
        v.put("group", f.group());
        v.put("modified", Instant.ofEpochMilli(f.mtimeMillis()).toString());
        v.put("symlinkTarget", f.symlinkTarget().isEmpty() ? null : f.symlinkTarget());
        return v;
    }

    private static Map<String, Object> view(FileWatch w) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("id", w.id());
        v.put("path", w.path());
        v.put("recursive", w.recursive());
        v.put("started", w.started().toString());
        v.put("pending", w.pending());
        v.put("lost", w.lost());
        return v;
    }

    /** The HTTP status of a file operation's failure. */
    static HttpResponseStatus status(Message.ErrorCode code) {
        return switch (code) {
            case NOT_FOUND -> HttpResponseStatus.NOT_FOUND;
            case EXISTS, NOT_EMPTY, REWOUND -> HttpResponseStatus.CONFLICT;
            case INVALID, NOT_DIRECTORY, IS_DIRECTORY, TOO_LONG -> HttpResponseStatus.BAD_REQUEST;
            case PERMISSION -> HttpResponseStatus.FORBIDDEN;
            case LIMIT -> HttpResponseStatus.TOO_MANY_REQUESTS;
            case NO_SPACE -> HttpResponseStatus.INSUFFICIENT_STORAGE;
            case RESOURCES -> HttpResponseStatus.SERVICE_UNAVAILABLE;
            case INTERNAL -> HttpResponseStatus.INTERNAL_SERVER_ERROR;
        };
    }

    private static String path(QueryStringDecoder q, String name) {
        List<String> v = q.parameters().get(name);
        if (v == null || v.isEmpty()) {
            throw new FileOpException(Message.ErrorCode.INVALID, "name the guest path with ?" + name + "=/absolute/path");
        }
        return dev.kosa8.files.FilePaths.check(v.getFirst());
    }

    private static String text(QueryStringDecoder q, String name) {
        List<String> v = q.parameters().get(name);
        return v == null || v.isEmpty() ? "" : v.getFirst();
    }

    private static boolean flag(QueryStringDecoder q, String name) {
        String v = text(q, name);
        if (v.isEmpty() || v.equals("false")) {
            return false;
        }
        if (v.equals("true")) {
            return true;
        }
        throw new FileOpException(Message.ErrorCode.INVALID, "\"" + name + "\" is true or false, not '" + v + "'");
    }

    private static long number(QueryStringDecoder q, String name, long dflt, long max) {
        String v = text(q, name);
        if (v.isEmpty()) {
            return dflt;
        }
        try {
            long n = Long.parseLong(v);
            if (n >= 0) {
                return Math.min(n, max);
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new FileOpException(Message.ErrorCode.INVALID, "\"" + name + "\" must be a whole number from 0, not '"
                + v + "'");
    }

    private static void expect(HttpMethod m, HttpMethod wanted) {
        if (m != wanted) {
            throw notFound();
        }
    }

    private static KosaException notFound() {
        return new KosaException(KosaException.Kind.USAGE, "no such API endpoint", "see docs/api.md, \"Files\"");
    }
}
