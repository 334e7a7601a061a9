package dev.kosa8.daemon;

import dev.kosa8.host.KosaException;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/** The API's {@code /v1/images} routes (docs/api.md), over {@link SandboxImages}. */
final class ImageRoutes {
    /**
     * The images: list, inspect, remove, pull, import, and build from a Dockerfile (a stream of progress lines).
     *
     * @param respond answers with a status and a value to write as JSON
     */
    void route(ChannelHandlerContext ctx, HttpMethod m, List<String> p, QueryStringDecoder q, boolean upgrade,
               SandboxManager mgr, BiConsumer<HttpResponseStatus, Object> respond, Consumer<String> log) {
        String sub = p.size() > 2 ? p.get(2) : "";
        if (sub.isEmpty() && m == HttpMethod.GET) {
            respond.accept(HttpResponseStatus.OK, mgr.images().list());
        } else if (sub.equals("inspect") && m == HttpMethod.GET) {
            respond.accept(HttpResponseStatus.OK, mgr.images().image(ApiHandler.param(q, "name", "")));
        } else if (sub.isEmpty() && m == HttpMethod.DELETE) {
            respond.accept(HttpResponseStatus.OK, Map.of("removed", mgr.images().remove(ApiHandler.param(q, "name", ""))));
        } else if (sub.equals("pull") && m == HttpMethod.POST) {
            respond.accept(HttpResponseStatus.OK, mgr.images().pull(ApiHandler.param(q, "ref", ""), ApiHandler.param(q, "tag", "")));
        } else if (sub.equals("import") && m == HttpMethod.POST) {
            respond.accept(HttpResponseStatus.OK, mgr.images().importImage(ApiHandler.param(q, "archive", ""), ApiHandler.param(q, "tag", "")));
        } else if (sub.equals("build") && m == HttpMethod.POST && upgrade) {
            ImageBuilds.Request req = buildRequest(q);
            BuildStream.start(ctx, mgr.images().builds(), req, Boolean.parseBoolean(ApiHandler.param(q, "verbose", "false")),
                    log);
        } else {
            throw ApiHandler.notFound();
        }
    }

    private static ImageBuilds.Request buildRequest(QueryStringDecoder q) {
        Map<String, String> args = new LinkedHashMap<>();
        for (String a : q.parameters().getOrDefault("buildArg", List.of())) {
            int eq = a.indexOf('=');
            if (eq <= 0) {
                throw new KosaException(KosaException.Kind.USAGE, "bad --build-arg '" + a + "'", "write NAME=VALUE");
            }
            args.put(a.substring(0, eq), a.substring(eq + 1));
        }
        String context = ApiHandler.param(q, "context", "");
        if (context.isEmpty() || !Path.of(context).isAbsolute()) {
            throw new KosaException(KosaException.Kind.USAGE, "the build context must be an absolute path", "");
        }
        String dockerfile = ApiHandler.param(q, "dockerfile", "");
        Path file = dockerfile.isEmpty() ? Path.of(context).resolve("Dockerfile") : Path.of(dockerfile);
        try {
            return new ImageBuilds.Request(Path.of(context), file, ApiHandler.param(q, "tag", ""),
                    q.parameters().getOrDefault("allow", List.of()), Boolean.parseBoolean(ApiHandler.param(q, "noCache",
                    "false")), args, q.parameters().containsKey("trustHostCas")
                    ? Boolean.valueOf(ApiHandler.param(q, "trustHostCas", "false")) : null,
                    Integer.parseInt(ApiHandler.param(q, "cpus", "2")), Integer.parseInt(ApiHandler.param(q, "memoryMiB", "1024")));
        } catch (NumberFormatException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cpus and memory must be numbers", "");
        }
    }
}
