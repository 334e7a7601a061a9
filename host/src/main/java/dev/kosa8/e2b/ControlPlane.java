package dev.kosa8.e2b;

import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * E2B's control plane (the paths and fields of its OpenAPI spec that the SDKs use): create, connect (resuming a
 * paused sandbox), get, list, kill, set timeout, pause, resume. Every request carries the listener's API key in
 * {@code X-API-KEY}. Errors are E2B's {@code {"code", "message"}}.
 */
final class ControlPlane {
    /** What envd this listener serves (docs/e2b.md, "envd version"). */
    static final String ENVD_VERSION = "0.5.7";
    static final int MAX_BODY = 64 * 1024;

    private final E2bSandboxes sandboxes;
    private final String apiKey;

    ControlPlane(E2bSandboxes sandboxes, String apiKey) {
        this.sandboxes = sandboxes;
        this.apiKey = apiKey;
    }

    void handle(Exchange x) throws IOException {
        if (!Secrets.sameKey(apiKey, x.headers.get("X-API-KEY"))) {
            throw new ApiError(401, x.headers.contains("X-API-KEY") ? "the API key is not this listener's"
                    : "no API key: send it in X-API-KEY (`eval \"$(kosa8 e2b env)\"` sets E2B_API_KEY)");
        }
        List<String> p = List.of(x.path.replaceAll("^/+|/+$", "").split("/"));
        if (!p.isEmpty() && p.getFirst().equals("v2")) {
            p = p.subList(1, p.size()); // v2 and v1 answer alike here
        }
        String m = x.method.name();
        if (p.size() == 1 && p.getFirst().equals("sandboxes")) {
            switch (m) {
                case "POST" -> x.json(201, created(create(body(x))));
                case "GET" -> x.json(200, list(x));
                default -> throw notFound(x);
            }
            return;
        }
        if (p.size() < 2 || !p.getFirst().equals("sandboxes")) {
            throw notFound(x);
        }
        String id = p.get(1);
        String action = p.size() > 2 ? p.get(2) : "";
        if (p.size() > 3) {
            throw notFound(x);
        }
        switch (m + " " + action) {
            case "GET " -> x.json(200, info(sandboxes.get(id), true));
            case "DELETE " -> {
                if (!sandboxes.kill(id)) {
                    throw ApiError.notFound("sandbox " + id + " not found");
                }
                x.empty(204);
            }
            case "POST timeout" -> {
                Json b = body(x);
                E2bSandbox s = sandboxes.get(id);
                s.endAt(Instant.now().plus(timeout(b, false)));
                x.empty(204);
            }
            case "POST refreshes" -> {
                Json b = body(x);
                E2bSandbox s = sandboxes.get(id);
                Duration d = Duration.ofSeconds(b.number("duration", 0, 0, 3600));
                Instant until = Instant.now().plus(d);
                if (until.isAfter(s.endAt())) {
                    s.endAt(until);
                }
                x.empty(204);
            }
            case "POST pause" -> {
                body(x);
                E2bSandbox s = sandboxes.get(id);
                var machine = sandboxes.backend().find(id).orElseThrow(() -> ApiError.notFound("sandbox " + id
                        + " not found"));
                if (machine.state() != E2bBackend.State.RUNNING) {
                    throw new ApiError(409, "sandbox " + id + " is already paused");
                }
                sandboxes.backend().pause(s.id);
                x.empty(204);
            }
            case "POST connect", "POST resume" -> {
                Json b = body(x);
                E2bSandbox s = sandboxes.get(id);
                var machine = sandboxes.backend().find(id).orElseThrow(() -> ApiError.notFound("sandbox " + id
                        + " not found"));
                boolean resumed = machine.state() != E2bBackend.State.RUNNING;
                if (action.equals("resume") && !resumed) {
                    throw new ApiError(409, "sandbox " + id + " is already running");
                }
                if (resumed) {
                    sandboxes.backend().resume(id);
                }
                Instant until = Instant.now().plus(timeout(b, true));
                if (resumed || until.isAfter(s.endAt())) {
                    s.endAt(until);
                }
                x.json(resumed ? 201 : 200, created(s));
            }
            case "GET metrics" -> {
                sandboxes.get(id);
                x.json(200, List.of());
            }
            default -> throw notFound(x);
        }
    }

    private static ApiError notFound(Exchange x) {
        return ApiError.notFound("no such path: " + x.method + " " + x.path
                + " (kosa8's E2B listener serves docs/e2b.md's list)");
    }

    private static Json body(Exchange x) throws IOException {
        byte[] b = x.body.readAll(MAX_BODY);
        if (b == null) {
            throw new ApiError(413, "a request body is at most " + MAX_BODY + " bytes here");
        }
        return Json.forApi(b);
    }

    private static Duration timeout(Json b, boolean optional) {
        if (!b.has("timeout")) {
            if (optional) {
                return E2bSandboxes.DEFAULT_TIMEOUT;
            }
            throw ApiError.badRequest("\"timeout\" (seconds) is required");
        }
        return Duration.ofSeconds(b.number("timeout", 0, 0, E2bSandboxes.MAX_TIMEOUT.toSeconds()));
    }

    private E2bSandbox create(Json b) {
        String template = b.string("templateID", "");
        if (template.isEmpty()) {
            throw ApiError.badRequest("\"templateID\" is required: a kosa8 image name (`kosa8 image ls`)");
        }
        if (template.equals("base")) {
            template = "kosa8/debian"; // the SDK's default template: kosa8's default image
        }
        Map<String, String> metadata = b.stringMap("metadata");
        Map<String, String> envs = b.stringMap("envVars");
        if (metadata.size() > 64 || envs.size() > 256) {
            throw ApiError.badRequest("at most 64 metadata entries and 256 variables");
        }
        for (String k : envs.keySet()) {
            if (!k.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                throw ApiError.badRequest("\"envVars\": bad variable name " + Json.quote(k));
            }
        }
        Duration timeout = b.has("timeout") ? timeout(b, false) : E2bSandboxes.DEFAULT_TIMEOUT;
        boolean autoPause = b.bool("autoPause", false);
        int cpus = (int) b.number("cpuCount", 2, 1, 64);
        int memory = (int) b.number("memoryMB", 1024, 128, 1 << 20);
        return sandboxes.create(template, metadata, envs, timeout, autoPause, cpus, memory);
    }

    /** The answer of create and connect. */
    private static Map<String, Object> created(E2bSandbox s) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("sandboxID", s.id);
        v.put("templateID", s.templateId);
        v.put("clientID", "kosa8");
        v.put("envdVersion", ENVD_VERSION);
        v.put("envdAccessToken", s.accessToken);
        v.put("trafficAccessToken", null);
        v.put("domain", "localhost");
        return v;
    }

    private Map<String, Object> info(E2bSandbox s, boolean detail) {
        E2bBackend.Machine m = sandboxes.backend().find(s.id).orElseThrow(() -> ApiError.notFound("sandbox " + s.id
                + " not found"));
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("sandboxID", s.id);
        v.put("templateID", s.templateId);
        v.put("alias", m.image());
        v.put("clientID", "kosa8");
        v.put("startedAt", s.startedAt.toString());
        v.put("endAt", s.endAt().toString());
        v.put("state", state(m));
        v.put("cpuCount", m.cpus());
        v.put("memoryMB", m.memoryMiB());
        v.put("diskSizeMB", 0);
        v.put("envdVersion", ENVD_VERSION);
        v.put("metadata", s.metadata);
        v.put("volumeMounts", List.of());
        if (detail) {
            v.put("domain", "localhost");
            v.put("lifecycle", Map.of("onTimeout", s.autoPause ? "pause" : "kill", "autoResume", false));
        }
        return v;
    }

    private static String state(E2bBackend.Machine m) {
        return m.state() == E2bBackend.State.RUNNING ? "running" : "paused";
    }

    private List<Map<String, Object>> list(Exchange x) {
        Set<String> states = Set.of("running", "paused");
        String st = x.param("state");
        if (st != null && !st.isEmpty()) {
            states = Set.of(st.split(","));
            for (String s : states) {
                if (!s.equals("running") && !s.equals("paused")) {
                    throw ApiError.badRequest("\"state\" is running, paused or both, not " + Json.quote(s));
                }
            }
        }
        Map<String, String> metadata = metadataQuery(x.param("metadata"));
        Set<String> want = states;
        return sandboxes.list().stream()
                .filter(s -> s.metadata.entrySet().containsAll(metadata.entrySet()))
                .map(s -> info(s, false))
                .filter(v -> want.contains((String) v.get("state")))
                .toList();
    }

    /** {@code metadata=k%3Dv%26k2%3Dv2}: the SDK's filter, one query parameter holding a query string. */
    static Map<String, String> metadataQuery(String q) {
        Map<String, String> out = new LinkedHashMap<>();
        if (q == null || q.isEmpty()) {
            return out;
        }
        for (String pair : q.split("&")) {
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw ApiError.badRequest("\"metadata\" is key=value pairs joined by &, not " + Json.quote(pair));
            }
            try {
                out.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            } catch (IllegalArgumentException e) {
                throw ApiError.badRequest("\"metadata\" has a bad escape: " + Json.quote(pair));
            }
        }
        return out;
    }
}
