package dev.kosa8.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kosa8.host.KosaException;
import dev.kosa8.processes.OutputBuffer;
import dev.kosa8.processes.ProcessInfo;
import dev.kosa8.processes.Processes;
import dev.kosa8.processes.SignalNames;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.ProtocolException;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * {@code /v1/sandboxes/ID/processes…} and {@code /v1/sandboxes/ID/env}: the processes the daemon keeps, and the
 * sandbox's own environment (docs/api.md, "Processes").
 */
final class ProcessRoutes {
    /** The most output one read returns. */
    static final int MAX_READ = 4 << 20;

    private final SandboxProcesses processes;

    ProcessRoutes(SandboxProcesses processes) {
        this.processes = processes;
    }

    /**
     * @param p       the path's parts: {@code v1 sandboxes ID processes [PROC [output|stdin|close-stdin|signal]]}
     * @param respond answers with a status and a value to write as JSON
     */
    void processes(Sandbox s, HttpMethod m, List<String> p, QueryStringDecoder q, byte[] body,
                   BiConsumer<HttpResponseStatus, Object> respond) {
        Processes all = processes.all();
        if (p.size() == 4 && m == HttpMethod.GET) {
            respond.accept(HttpResponseStatus.OK, all.list(s.id()).stream().map(ProcessRoutes::view).toList());
            return;
        }
        if (p.size() == 4 && m == HttpMethod.POST) {
            respond.accept(HttpResponseStatus.CREATED, view(processes.start(s, startRequest(body))));
            return;
        }
        if (p.size() < 5) {
            throw notFound();
        }
        String proc = p.get(4);
        String action = p.size() > 5 ? p.get(5) : "";
        if (p.size() > 6) {
            throw notFound();
        }
        switch (action) {
            case "" -> {
                if (m == HttpMethod.GET) {
                    respond.accept(HttpResponseStatus.OK, view(all.get(s.id(), proc)));
                } else if (m == HttpMethod.DELETE) {
                    all.remove(s.id(), proc);
                    respond.accept(HttpResponseStatus.OK, Map.of("removed", proc));
                } else {
                    throw notFound();
                }
            }
            case "output" -> {
                expect(m, HttpMethod.GET);
                long from = number(q, "from", 0, Long.MAX_VALUE);
                int max = (int) number(q, "max", MAX_READ, MAX_READ);
                long wait = number(q, "wait", 0, Processes.MAX_WAIT.toSeconds());
                OutputBuffer.Slice slice = all.read(s.id(), proc, from, Math.max(1, max), Duration.ofSeconds(wait));
                respond.accept(HttpResponseStatus.OK, outputView(slice, all.get(s.id(), proc)));
            }
            case "stdin" -> {
                expect(m, HttpMethod.POST);
                all.write(s.id(), proc, body);
                respond.accept(HttpResponseStatus.OK, Map.of("written", body.length));
            }
            case "close-stdin" -> {
                expect(m, HttpMethod.POST);
                all.closeStdin(s.id(), proc);
                respond.accept(HttpResponseStatus.OK, view(all.get(s.id(), proc)));
            }
            case "signal" -> {
                expect(m, HttpMethod.POST);
                String name = q.parameters().getOrDefault("signal", List.of("TERM")).getFirst();
                int sig = SignalNames.parse(name);
                all.signal(s.id(), proc, sig);
                respond.accept(HttpResponseStatus.OK, Map.of("id", proc, "signal", SignalNames.name(sig)));
            }
            default -> throw notFound();
        }
    }

    /** {@code GET /v1/sandboxes/ID/env}, and {@code POST} with {@code set=NAME=VALUE} and {@code unset=NAME}. */
    void environment(Sandbox s, HttpMethod m, QueryStringDecoder q, BiConsumer<HttpResponseStatus, Object> respond) {
        if (m == HttpMethod.GET) {
            respond.accept(HttpResponseStatus.OK, Map.of("env", processes.environment(s)));
            return;
        }
        expect(m, HttpMethod.POST);
        Map<String, String> set = new LinkedHashMap<>();
        for (String a : q.parameters().getOrDefault("set", List.of())) {
            int eq = a.indexOf('=');
            if (eq <= 0) {
                throw new KosaException(KosaException.Kind.USAGE, "bad variable '" + a + "'", "write NAME=VALUE");
            }
            set.put(a.substring(0, eq), a.substring(eq + 1));
        }
        respond.accept(HttpResponseStatus.OK, Map.of("env", processes.changeEnvironment(s, set,
                q.parameters().getOrDefault("unset", List.of()))));
    }

    private static Processes.Start startRequest(byte[] body) {
        JsonNode n;
        try {
            n = SandboxStore.JSON.readTree(body);
        } catch (IOException e) {
            throw usage("the body is not JSON: " + e.getMessage().lines().findFirst().orElse(""));
        }
        if (n == null || !n.isObject() || !n.path("command").isArray() || n.path("command").isEmpty()) {
            throw usage("the body must be a JSON object with \"command\", a list of strings");
        }
        List<String> argv = new ArrayList<>();
        n.path("command").forEach(a -> argv.add(text(a, "command")));
        Map<String, String> env = new LinkedHashMap<>();
        n.path("env").fields().forEachRemaining(e -> env.put(e.getKey(), text(e.getValue(), "env")));
        long timeout = n.path("timeoutSeconds").asLong(0);
        if (timeout < 0) {
            throw usage("\"timeoutSeconds\" cannot be negative");
        }
        try {
            Message.ExecSpec spec = new Message.ExecSpec(argv, env, n.path("cwd").asText(""),
                    n.path("user").asText(""), false, 0, 0);
            return new Processes.Start(spec, n.path("tag").asText(""), Duration.ofSeconds(timeout),
                    n.path("stdin").asBoolean(false));
        } catch (ProtocolException e) {
            throw usage(e.getMessage());
        }
    }

    private static String text(JsonNode n, String field) {
        if (!n.isTextual()) {
            throw usage("\"" + field + "\" holds strings only, not " + n);
        }
        return n.asText();
    }

    /** A process as the API shows it (docs/api.md). */
    static Map<String, Object> view(ProcessInfo i) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("id", i.id());
        v.put("command", i.command());
        v.put("tag", i.tag());
        v.put("started", i.started().toString());
        v.put("pid", i.pid());
        v.put("state", i.state().label());
        v.put("exitCode", i.exitCode());
        v.put("signal", i.signal());
        v.put("reason", i.reason());
        v.put("ended", i.ended() == null ? null : i.ended().toString());
        v.put("stdinOpen", i.stdinOpen());
        v.put("timeoutSeconds", i.timeoutSeconds());
        v.put("output", Map.of("end", i.output().end(), "buffered", i.output().buffered(),
                "dropped", i.output().dropped(), "capacity", i.output().capacity()));
        return v;
    }

    private static Map<String, Object> outputView(OutputBuffer.Slice s, ProcessInfo i) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("from", s.from());
        v.put("next", s.next());
        v.put("end", s.end());
        v.put("dropped", s.dropped());
        v.put("complete", s.complete());
        v.put("chunks", s.chunks().stream().map(c -> Map.of("stream", c.stream() == Message.Stream.STDERR
                ? "stderr" : "stdout", "offset", c.offset(), "data", Base64.getEncoder().encodeToString(c.bytes())))
                .toList());
        v.put("process", view(i));
        return v;
    }

    private static long number(QueryStringDecoder q, String name, long dflt, long max) {
        List<String> v = q.parameters().get(name);
        if (v == null || v.isEmpty()) {
            return dflt;
        }
        try {
            long n = Long.parseLong(v.getFirst());
            if (n >= 0) {
                return Math.min(n, max);
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw usage("\"" + name + "\" must be a whole number from 0, not '" + v.getFirst() + "'");
    }

    private static void expect(HttpMethod m, HttpMethod wanted) {
        if (m != wanted) {
            throw notFound();
        }
    }

    private static KosaException usage(String what) {
        return new KosaException(KosaException.Kind.USAGE, what, "see docs/api.md, \"Processes\"");
    }

    private static KosaException notFound() {
        return new KosaException(KosaException.Kind.USAGE, "no such API endpoint", "see docs/api.md");
    }
}
