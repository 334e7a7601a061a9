package dev.kosa8.e2b;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The listener on loopback over a backend with no VM ({@link FakeBackend}): routing, the API key and access
 * tokens, and the refusals E2B's clients get for what they should not send, each leaving the other sandbox
 * answering. The real SDK against real microVMs is {@code E2bIT}.
 */
class E2bListenerTest {
    static final String KEY = E2bListener.newApiKey();
    static FakeBackend backend;
    static E2bListener listener;
    static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    static JsonNode a;
    static JsonNode b;

    @BeforeAll
    static void start() throws Exception {
        backend = new FakeBackend();
        listener = E2bListener.start(backend, "127.0.0.1", 0, KEY, s -> { });
        a = Json.MAPPER.readTree(control("POST", "/v2/sandboxes", "{\"templateID\":\"base\",\"metadata\":{\"n\":\"a\"}}", KEY).body());
        b = Json.MAPPER.readTree(control("POST", "/v2/sandboxes", "{\"templateID\":\"kosa8/debian\"}", KEY).body());
    }

    @AfterAll
    static void stop() {
        listener.close();
    }

    static HttpResponse<String> control(String method, String path, String body, String key) throws Exception {
        var r = HttpRequest.newBuilder(URI.create(listener.url() + path))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json");
        if (key != null) {
            r.header("X-API-KEY", key);
        }
        return HTTP.send(r.build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<byte[]> envd(JsonNode sandbox, String token, String path, String type, byte[] body)
            throws Exception {
        var r = HttpRequest.newBuilder(URI.create(listener.url() + path))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .header("Content-Type", type)
                .header("E2b-Sandbox-Id", sandbox.path("sandboxID").asText())
                .header("E2b-Sandbox-Port", "49983");
        if (token != null) {
            r.header("X-Access-Token", token);
        }
        return HTTP.send(r.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    static String token(JsonNode s) {
        return s.path("envdAccessToken").asText();
    }

    static String text(HttpResponse<byte[]> r) {
        return new String(r.body(), StandardCharsets.UTF_8);
    }

    /** The other sandbox still answers its own calls. */
    static void bStillAnswers() throws Exception {
        var r = envd(b, token(b), "/process.Process/List", "application/json", "{}".getBytes());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(text(r)).isEqualTo("{\"processes\":[]}");
    }

    @Test
    void createAnswersWhatTheSdkReads() {
        assertThat(a.path("sandboxID").asText()).isNotEmpty();
        assertThat(a.path("envdVersion").asText()).isEqualTo(ControlPlane.ENVD_VERSION);
        assertThat(a.path("domain").asText()).isEqualTo("localhost");
        assertThat(token(a)).matches("[0-9a-f]{40}").isNotEqualTo(token(b));
        assertThat(KEY).matches("e2b_[0-9a-f]{40}");
    }

    @Test
    void aWrongOrMissingApiKeyIsRefused() throws Exception {
        int before = backend.machines.size();
        for (String key : new String[] {null, "e2b_0000", KEY + "x", ""}) {
            var r = control("GET", "/v2/sandboxes", null, key);
            assertThat(r.statusCode()).as(String.valueOf(key)).isEqualTo(401);
            JsonNode e = Json.MAPPER.readTree(r.body());
            assertThat(e.path("code").asInt()).isEqualTo(401);
            assertThat(e.path("message").asText()).isNotEmpty();
        }
        assertThat(control("POST", "/v2/sandboxes", "{\"templateID\":\"base\"}", "wrong").statusCode())
                .isEqualTo(401);
        assertThat(backend.machines).hasSize(before);
    }

    @Test
    void listAndInfoAndTimeoutAndPauseAndConnect() throws Exception {
        var list = Json.MAPPER.readTree(control("GET", "/v2/sandboxes?metadata=n%3Da", null, KEY).body());
        assertThat(list).hasSize(1);
        assertThat(list.get(0).path("sandboxID").asText()).isEqualTo(a.path("sandboxID").asText());
        String id = b.path("sandboxID").asText();
        assertThat(control("POST", "/sandboxes/" + id + "/timeout", "{\"timeout\":600}", KEY).statusCode())
                .isEqualTo(204);
        assertThat(control("POST", "/sandboxes/" + id + "/timeout", "{\"timeout\":\"x\"}", KEY).statusCode())
                .isEqualTo(400);
        assertThat(control("POST", "/sandboxes/" + id + "/pause", "{}", KEY).statusCode()).isEqualTo(204);
        assertThat(control("POST", "/sandboxes/" + id + "/pause", "{}", KEY).statusCode()).isEqualTo(409);
        var paused = envd(b, token(b), "/process.Process/List", "application/json", "{}".getBytes());
        assertThat(paused.statusCode()).isEqualTo(502);
        var c = control("POST", "/v2/sandboxes/" + id + "/connect", "{\"timeout\":300}", KEY);
        assertThat(c.statusCode()).isEqualTo(201);
        assertThat(Json.MAPPER.readTree(c.body()).path("envdAccessToken").asText()).isEqualTo(token(b));
        assertThat(control("POST", "/v2/sandboxes/" + id + "/connect", "{}", KEY).statusCode()).isEqualTo(200);
        JsonNode info = Json.MAPPER.readTree(control("GET", "/sandboxes/" + id, null, KEY).body());
        assertThat(info.path("state").asText()).isEqualTo("running");
        assertThat(control("GET", "/sandboxes/nope", null, KEY).statusCode()).isEqualTo(404);
        assertThat(Json.MAPPER.readTree(control("POST", "/v2/sandboxes/nope/connect", "{}", KEY).body())
                .path("code").asInt()).isEqualTo(404);
        bStillAnswers();
    }

    @Test
    void killThenConnectIsNotFound() throws Exception {
        JsonNode c = Json.MAPPER.readTree(control("POST", "/v2/sandboxes", "{\"templateID\":\"base\"}", KEY).body());
        String id = c.path("sandboxID").asText();
        assertThat(control("DELETE", "/sandboxes/" + id, null, KEY).statusCode()).isEqualTo(204);
        assertThat(control("DELETE", "/sandboxes/" + id, null, KEY).statusCode()).isEqualTo(404);
        assertThat(control("POST", "/v2/sandboxes/" + id + "/connect", "{}", KEY).statusCode()).isEqualTo(404);
        var gone = envd(c, token(c), "/process.Process/List", "application/json", "{}".getBytes());
        assertThat(gone.statusCode()).isEqualTo(502);
        bStillAnswers();
    }

    @Test
    void aWrongTokenOrAnotherSandboxsTokenIsRefused() throws Exception {
        for (String t : new String[] {null, "", "0".repeat(40), token(a)}) {
            var r = envd(b, t, "/process.Process/List", "application/json", "{}".getBytes());
            assertThat(r.statusCode()).as(String.valueOf(t)).isEqualTo(401);
            assertThat(Json.MAPPER.readTree(r.body()).path("code").asText()).isEqualTo("unauthenticated");
            var f = HTTP.send(HttpRequest.newBuilder(URI.create(listener.url() + "/files?path=/etc/passwd"))
                    .header("E2b-Sandbox-Id", b.path("sandboxID").asText())
                    .header("X-Access-Token", t == null ? "" : t).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(f.statusCode()).isEqualTo(401);
        }
        bStillAnswers();
    }

    @Test
    void malformedConnectRequestsAreRefusedWithConnectErrors() throws Exception {
        record Case(String type, byte[] body, int status, String code) {
        }
        byte[] json = "{\"process\":{\"cmd\":\"true\"}}".getBytes();
        byte[] framed = ConnectEnvelope.frame(0, json);
        List<Case> cases = new ArrayList<>(List.of(
                new Case("application/json", "{not json".getBytes(), 400, "invalid_argument"),
                new Case("application/json", "[1]".getBytes(), 400, "invalid_argument"),
                new Case("application/json", "{\"process\":{\"pid\":\"x\"}}".getBytes(), 400, "invalid_argument"),
                new Case("text/plain", json, 400, "invalid_argument")));
        for (Case c : cases) {
            var r = envd(a, token(a), "/process.Process/SendSignal", c.type(), c.body());
            assertThat(r.statusCode()).as(text(r)).isEqualTo(c.status());
            assertThat(Json.MAPPER.readTree(r.body()).path("code").asText()).isEqualTo(c.code());
        }
        // a stream's refusals come in its end message
        byte[] truncated = java.util.Arrays.copyOf(framed, framed.length - 3);
        byte[] oversized = {0, 0x7f, 0, 0, 0, '{', '}'};
        for (byte[] body : List.of(truncated, oversized, new byte[] {0, 0})) {
            var r = envd(a, token(a), "/process.Process/Start", "application/connect+json", body);
            assertThat(r.statusCode()).isEqualTo(200);
            List<ConnectEnvelope.Frame> frames = ConnectEnvelope.decodeAll(r.body(), 1 << 20);
            assertThat(frames).hasSize(1);
            assertThat(frames.getFirst().flags()).isEqualTo(ConnectEnvelope.END_STREAM);
            assertThat(new String(frames.getFirst().message())).contains("\"error\"")
                    .containsAnyOf("invalid_argument", "resource_exhausted");
        }
        var big = envd(a, token(a), "/process.Process/SendInput", "application/json",
                new byte[ConnectCall.MAX_MESSAGE + 10]);
        assertThat(big.statusCode()).isEqualTo(429);
        bStillAnswers();
    }

    @Test
    void aProcessStartsAndStreamsItsEvents() throws Exception {
        byte[] req = ConnectEnvelope.frame(0, "{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"echo hi\"]}}"
                .getBytes());
        var r = envd(a, token(a), "/process.Process/Start", "application/connect+json", req);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).hasValue("application/connect+json");
        List<ConnectEnvelope.Frame> frames = ConnectEnvelope.decodeAll(r.body(), 1 << 20);
        List<String> events = frames.stream().map(f -> new String(f.message(), StandardCharsets.UTF_8)).toList();
        assertThat(events.getFirst()).matches("\\{\"event\":\\{\"start\":\\{\"pid\":[0-9]+}}}");
        String out = new String(java.util.Base64.getDecoder().decode(Json.MAPPER.readTree(events.get(1))
                .path("event").path("data").path("stdout").asText()));
        assertThat(out).isEqualTo("ran [/bin/bash, -l, -c, echo hi] as user in /home/user\n");
        assertThat(events.get(2)).isEqualTo("{\"event\":{\"end\":{\"exitCode\":0,\"exited\":true,\"status\":\"exit status 0\"}}}");
        assertThat(frames.getLast().flags()).isEqualTo(ConnectEnvelope.END_STREAM);
        assertThat(events.getLast()).isEqualTo("{}");
        var notFound = envd(a, token(a), "/process.Process/SendSignal", "application/json",
                "{\"process\":{\"pid\":424242},\"signal\":\"SIGNAL_SIGKILL\"}".getBytes());
        assertThat(notFound.statusCode()).isEqualTo(404);
        assertThat(Json.MAPPER.readTree(notFound.body()).path("code").asText()).isEqualTo("not_found");
    }

    @Test
    void aTerminalsOutputComesAsPtyAndItsSizeIsUpdated() throws Exception {
        byte[] req = ConnectEnvelope.frame(0, ("{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-i\",\"-l\"]},"
                + "\"pty\":{\"size\":{\"cols\":80,\"rows\":24}}}").getBytes());
        var r = envd(a, token(a), "/process.Process/Start", "application/connect+json", req);
        List<String> events = ConnectEnvelope.decodeAll(r.body(), 1 << 20).stream()
                .map(f -> new String(f.message(), StandardCharsets.UTF_8)).toList();
        assertThat(events.get(1)).startsWith("{\"event\":{\"data\":{\"pty\":");
        var bad = envd(a, token(a), "/process.Process/Start", "application/connect+json", ConnectEnvelope.frame(0,
                "{\"process\":{\"cmd\":\"x\"},\"pty\":{\"size\":{\"cols\":0,\"rows\":24}}}".getBytes()));
        assertThat(new String(bad.body(), StandardCharsets.UTF_8)).contains("invalid_argument");
        var update = envd(a, token(a), "/process.Process/Update", "application/json",
                "{\"process\":{\"pid\":4242},\"pty\":{\"size\":{\"cols\":100,\"rows\":30}}}".getBytes());
        assertThat(update.statusCode()).isEqualTo(404);
    }

    @Test
    void filesRefusePathEscapesAndAnswerAMissingFileWith404() throws Exception {
        for (String p : List.of("../../etc/shadow", "/tmp/../etc/shadow", "")) {
            var r = HTTP.send(HttpRequest.newBuilder(URI.create(listener.url() + "/files?path="
                            + java.net.URLEncoder.encode(p, StandardCharsets.UTF_8)))
                    .header("E2b-Sandbox-Id", a.path("sandboxID").asText()).header("X-Access-Token", token(a))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(p).isEqualTo(400);
            assertThat(Json.MAPPER.readTree(r.body()).path("code").asInt()).isEqualTo(400);
        }
        var missing = HTTP.send(HttpRequest.newBuilder(URI.create(listener.url() + "/files?path=/tmp/none"))
                .header("E2b-Sandbox-Id", a.path("sandboxID").asText()).header("X-Access-Token", token(a))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(missing.statusCode()).isEqualTo(404);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(E2bDecodersFuzzTest.multipart("xyz", List.of("../escape"), List.of("x".getBytes())));
        var up = envd(a, token(a), "/files", "multipart/form-data; boundary=xyz", body.toByteArray());
        assertThat(up.statusCode()).isEqualTo(400);
        var ok = envd(a, token(a), "/files", "multipart/form-data; boundary=xyz",
                E2bDecodersFuzzTest.multipart("xyz", List.of("/tmp/ok.txt"), List.of("x".getBytes())));
        assertThat(ok.statusCode()).as(text(ok)).isEqualTo(200);
        assertThat(text(ok)).contains("\"path\":\"/tmp/ok.txt\"");
        bStillAnswers();
    }

    /**
     * The Python SDK's watcher calls, which the JS SDK never makes (it streams WatchDir): the bodies are those
     * protobuf's JSON writes for the Python SDK's CreateWatcherRequest(path, recursive),
     * GetWatcherEventsRequest(watcher_id) and RemoveWatcherRequest(watcher_id) (e2b's sandbox_sync filesystem).
     */
    @Test
    void thePythonSdksUnaryWatcherCalls() throws Exception {
        var created = envd(a, token(a), "/filesystem.Filesystem/CreateWatcher", "application/json",
                "{\"path\": \"/tmp/d\", \"recursive\": false}".getBytes());
        assertThat(created.statusCode()).as(text(created)).isEqualTo(200);
        String id = Json.MAPPER.readTree(created.body()).path("watcherId").asText();
        assertThat(id).isNotEmpty();
        byte[] get = ("{\"watcherId\": \"" + id + "\"}").getBytes();
        var events = envd(a, token(a), "/filesystem.Filesystem/GetWatcherEvents", "application/json", get);
        assertThat(Json.MAPPER.readTree(events.body())).isEqualTo(Json.MAPPER.readTree(
                "{\"events\":[{\"name\":\"new.txt\",\"type\":\"EVENT_TYPE_CREATE\"}]}"));
        var removed = envd(a, token(a), "/filesystem.Filesystem/RemoveWatcher", "application/json", get);
        assertThat(removed.statusCode()).isEqualTo(200);
        var gone = envd(a, token(a), "/filesystem.Filesystem/GetWatcherEvents", "application/json", get);
        assertThat(gone.statusCode()).isEqualTo(404);
        assertThat(Json.MAPPER.readTree(gone.body()).path("code").asText()).isEqualTo("not_found");
        var otherSandbox = envd(b, token(b), "/filesystem.Filesystem/GetWatcherEvents", "application/json", get);
        assertThat(otherSandbox.statusCode()).isEqualTo(404);
    }

    @Test
    void theReaperRemovesATimedOutSandboxOrPausesItWhenAsked() throws Exception {
        String killed = Json.MAPPER.readTree(control("POST", "/v2/sandboxes",
                "{\"templateID\":\"base\",\"timeout\":1}", KEY).body()).path("sandboxID").asText();
        String paused = Json.MAPPER.readTree(control("POST", "/v2/sandboxes",
                "{\"templateID\":\"base\",\"timeout\":1,\"autoPause\":true}", KEY).body()).path("sandboxID").asText();
        long deadline = System.currentTimeMillis() + 10_000;
        while (System.currentTimeMillis() < deadline && (backend.machines.containsKey(killed)
                || backend.machines.get(paused).state() != E2bBackend.State.PAUSED)) {
            Thread.sleep(100);
        }
        assertThat(backend.machines).doesNotContainKey(killed);
        assertThat(backend.machines.get(paused).state()).isEqualTo(E2bBackend.State.PAUSED);
        JsonNode info = Json.MAPPER.readTree(control("GET", "/sandboxes/" + paused, null, KEY).body());
        assertThat(info.path("state").asText()).isEqualTo("paused");
        assertThat(control("POST", "/v2/sandboxes/" + paused + "/connect", "{\"timeout\":600}", KEY).statusCode())
                .isEqualTo(201);
        Thread.sleep(1500);
        assertThat(backend.machines.get(paused).state()).isEqualTo(E2bBackend.State.RUNNING);
        assertThat(control("DELETE", "/sandboxes/" + paused, null, KEY).statusCode()).isEqualTo(204);
        bStillAnswers();
    }

    @Test
    void theControlPlanesBoundsAreHit() throws Exception {
        String big = "{\"templateID\":\"base\",\"metadata\":{\"x\":\"" + "y".repeat(ControlPlane.MAX_BODY) + "\"}}";
        int before = backend.machines.size();
        assertThat(control("POST", "/v2/sandboxes", big, KEY).statusCode()).isEqualTo(413);
        var tooLong = control("POST", "/v2/sandboxes", "{\"templateID\":\"base\",\"timeout\":"
                + (E2bSandboxes.MAX_TIMEOUT.toSeconds() + 1) + "}", KEY);
        assertThat(tooLong.statusCode()).isEqualTo(400);
        assertThat(tooLong.body()).contains("timeout");
        assertThat(control("POST", "/v2/sandboxes", "{\"templateID\":\"\"}", KEY).statusCode()).isEqualTo(400);
        assertThat(control("POST", "/v2/sandboxes", "{\"templateID\":\"base\",\"envVars\":{\"A=B\":\"x\"}}", KEY)
                .statusCode()).isEqualTo(400);
        assertThat(backend.machines).hasSize(before);
        bStillAnswers();
    }

    @Test
    void octetStreamUploadsPlainAndGzippedAreWritten() throws Exception {
        var plain = HTTP.send(HttpRequest.newBuilder(URI.create(listener.url() + "/files?path=/tmp/o.bin"))
                .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[100_000]))
                .header("Content-Type", "application/octet-stream")
                .header("E2b-Sandbox-Id", a.path("sandboxID").asText()).header("X-Access-Token", token(a)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(plain.statusCode()).as(plain.body()).isEqualTo(200);
        assertThat(plain.body()).contains("\"path\":\"/tmp/o.bin\"");
        ByteArrayOutputStream z = new ByteArrayOutputStream();
        try (var gz = new java.util.zip.GZIPOutputStream(z)) {
            gz.write(new byte[100_000]);
        }
        var gzipped = HTTP.send(HttpRequest.newBuilder(URI.create(listener.url() + "/files?path=o.gz.bin"))
                .POST(HttpRequest.BodyPublishers.ofByteArray(z.toByteArray()))
                .header("Content-Type", "application/octet-stream").header("Content-Encoding", "gzip")
                .header("E2b-Sandbox-Id", a.path("sandboxID").asText()).header("X-Access-Token", token(a)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(gzipped.statusCode()).as(gzipped.body()).isEqualTo(200);
        assertThat(gzipped.body()).contains("\"path\":\"/home/user/o.gz.bin\"");
        var notGzip = HTTP.send(HttpRequest.newBuilder(URI.create(listener.url() + "/files?path=/tmp/x"))
                .POST(HttpRequest.BodyPublishers.ofByteArray("plain".getBytes()))
                .header("Content-Type", "application/octet-stream").header("Content-Encoding", "gzip")
                .header("E2b-Sandbox-Id", a.path("sandboxID").asText()).header("X-Access-Token", token(a)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(notGzip.statusCode()).isEqualTo(400);
        var br = HTTP.send(HttpRequest.newBuilder(URI.create(listener.url() + "/files?path=/tmp/x"))
                .POST(HttpRequest.BodyPublishers.ofByteArray("x".getBytes()))
                .header("Content-Type", "application/octet-stream").header("Content-Encoding", "br")
                .header("E2b-Sandbox-Id", a.path("sandboxID").asText()).header("X-Access-Token", token(a)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(br.statusCode()).isEqualTo(400);
        bStillAnswers();
    }

    @Test
    void anotherPortThanEnvdsIsNotServed() throws Exception {
        var r = HTTP.send(HttpRequest.newBuilder(URI.create(listener.url() + "/"))
                .header("E2b-Sandbox-Id", a.path("sandboxID").asText()).header("E2b-Sandbox-Port", "8080")
                .header("X-Access-Token", token(a)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(502);
        assertThat(r.body()).contains("kosa8 port");
    }

    @Test
    void theHealthOfARunningSandboxIsNoContent() throws IOException, InterruptedException {
        var r = HTTP.send(HttpRequest.newBuilder(URI.create(listener.url() + "/health"))
                .header("E2b-Sandbox-Id", a.path("sandboxID").asText()).header("X-Access-Token", token(a)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(204);
    }
}
