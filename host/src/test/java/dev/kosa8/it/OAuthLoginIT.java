package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.egress.FakeOAuth;
import dev.kosa8.egress.TestUpstream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A login made inside a real guest, kept outside: a Python client in the guest
 * does what Codex's "Sign in with ChatGPT" does at kosa8's real provider table
 * ({@code auth.openai.com/oauth/token}, then {@code chatgpt.com}), served by
 * a fake token endpoint and API on the host's loopback through the broker's
 * test upstream setting. The guest gets placeholders only; the API sees the
 * real tokens; a refresh with the refresh placeholder works; the host keeps
 * the tokens in the secret store until the sandbox is removed; and a scan of
 * the guest's RAM and disk finds no real token. The default image, no agent.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OAuthLoginIT {
    static final Duration T = Duration.ofMinutes(2);
    static final ObjectMapper JSON = new ObjectMapper();
    static TestUpstream token;
    static TestUpstream api;
    static FakeOAuth fake;
    static String id;

    /** Logs in (or refreshes, given a refresh token) as a client would, keeping the answer in ~/.codex/auth.json. */
    static final String CLIENT = """
            import json, os, sys, urllib.parse, urllib.request
            path = os.path.expanduser("~/.codex/auth.json")
            if sys.argv[1] == "login":
                form = {"grant_type": "authorization_code", "code": "%s", "client_id": "app_test"}
            else:
                form = {"grant_type": "refresh_token", "refresh_token": json.load(open(path))["refresh_token"],
                        "client_id": "app_test"}
            req = urllib.request.Request("https://auth.openai.com/oauth/token",
                                         data=urllib.parse.urlencode(form).encode())
            answer = urllib.request.urlopen(req, timeout=60).read().decode()
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "w").write(answer)
            tokens = json.loads(answer)
            me = urllib.request.Request("https://chatgpt.com/backend-api/me",
                                        headers={"Authorization": "Bearer " + tokens["access_token"]})
            print(json.dumps({"answer": tokens, "api": urllib.request.urlopen(me, timeout=60).read().decode()}))
            """.formatted(FakeOAuth.CODE);

    @BeforeAll
    static void boot() throws Exception {
        Path servers = Files.createDirectories(Kosa.HOME.resolveSibling("it-upstreams").resolve("oauth"));
        token = new TestUpstream(servers, "auth.openai.com");
        api = new TestUpstream(servers, "chatgpt.com"); // the same test CA: the broker trusts one file
        fake = new FakeOAuth(token, "/oauth/token", api, "/backend-api/me");
        Files.writeString(Kosa.EGRESS_TEST_CONFIG, """
                {"loopback": {"auth.openai.com:443": %d, "chatgpt.com:443": %d}, "trustedCa": "%s"}
                """.formatted(token.httpsPort(), api.httpsPort(), token.caPem));
        id = Kosa.ok(Duration.ofMinutes(15), "create", "--workspace", "none", "--allow", "auth.openai.com",
                "--allow", "chatgpt.com").stdout().strip();
        Kosa.ok(T, "cp", write(servers.resolve("client.py")).toString(), id + ":/root/client.py");
    }

    static Path write(Path p) throws Exception {
        return Files.writeString(p, CLIENT);
    }

    @AfterAll
    static void remove() throws Exception {
        if (id != null) {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
        }
        Files.deleteIfExists(Kosa.EGRESS_TEST_CONFIG);
        if (token != null) {
            token.close();
        }
        if (api != null) {
            api.close();
        }
    }

    static JsonNode client(String what) throws Exception {
        Kosa.Result r = Kosa.run(T, "exec", id, "--", "python3", "/root/client.py", what);
        assertThat(r.exitCode()).as(r.toString()).isZero();
        for (String real : List.copyOf(fake.issued)) {
            assertThat(r.stdout()).as("what the guest got holds no real token").doesNotContain(real);
        }
        return JSON.readTree(r.stdout());
    }

    @Test
    @Order(1)
    void aLoginInsideLeavesPlaceholdersAndTheApiSeesTheRealToken() throws Exception {
        JsonNode got = client("login");
        String access = got.path("answer").path("access_token").asText();
        assertThat(access).hasSameSizeAs(fake.access()).startsWith("fake-at01-").isNotEqualTo(fake.access());
        assertThat(got.path("api").asText()).isEqualTo("hello, token 1");
        assertThat(fake.apiAuthorizations).last().isEqualTo("Bearer " + fake.access());
        assertThat(Kosa.ok(T, "net", "log", id).stdout()).contains("oauth-openai learned access_token");
    }

    @Test
    @Order(2)
    void aRefreshWithThePlaceholderGetsNewPlaceholdersAndTheApiTheNewToken() throws Exception {
        String firstRefresh = fake.refresh();
        JsonNode got = client("refresh");
        assertThat(fake.tokenRequests).last().asString()
                .contains("refresh_token=" + java.net.URLEncoder.encode(firstRefresh, StandardCharsets.UTF_8));
        assertThat(got.path("api").asText()).isEqualTo("hello, token 2");
        assertThat(fake.apiAuthorizations).last().isEqualTo("Bearer " + fake.access());
    }

    @Test
    @Order(3)
    void theHostKeepsTheTokensInTheSecretStore() throws Exception {
        String name = "oauth_" + id + "_openai_refresh";
        Path values = Kosa.HOME.resolve("config/secret-values.json");
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < until && !(Files.exists(values) && Files.readString(values).contains(fake.refresh()))) {
            Thread.sleep(200);
        }
        assertThat(Files.readString(values)).contains(fake.refresh()).contains(fake.access());
        assertThat(Kosa.ok(T, "secret", "ls").stdout()).contains(name).doesNotContain(fake.refresh());
    }

    @Tag("long") // the default suite took 35.7 min on a clean clone on 2026-12-05 (goal 30): ./run-tests long
    @Test
    @Order(4)
    void noRealTokenIsInTheGuestsRamOrDisk() throws Exception {
        Kosa.ok(T, "exec", id, "--", "sync");
        Path dump = Kosa.HOME.resolveSibling("OAuthLoginIT-" + id + ".core");
        Files.deleteIfExists(dump);
        try {
            Kosa.ok(Duration.ofMinutes(10), "dump-memory", id, dump.toString());
            Path disk = Kosa.HOME.resolve("data/sandboxes").resolve(id).resolve("root.qcow2");
            for (Path p : List.of(dump, disk)) {
                for (String real : List.copyOf(fake.issued)) {
                    for (byte[] form : SecretsIT.forms(real)) {
                        assertThat(SecretsIT.count(p, form)).as("a real token (%s...) in %s",
                                real.substring(0, 12), p).isZero();
                    }
                }
            }
            String placeholder = JSON.readTree(Kosa.ok(T, "exec", id, "--", "cat", "/root/.codex/auth.json").stdout())
                    .path("refresh_token").asText();
            assertThat(SecretsIT.count(dump, placeholder.getBytes(StandardCharsets.US_ASCII))
                    + SecretsIT.count(disk, placeholder.getBytes(StandardCharsets.US_ASCII)))
                    .as("the same scan finds the placeholder, so it can find a token").isPositive();
        } finally {
            Files.deleteIfExists(dump);
        }
    }

    @Test
    @Order(5)
    void removingTheSandboxRemovesItsTokensFromTheStore() throws Exception {
        Kosa.ok(Duration.ofMinutes(1), "rm", "-f", id);
        String removed = id;
        id = null;
        Path values = Kosa.HOME.resolve("config/secret-values.json");
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < until && Files.readString(values).contains(fake.refresh())) {
            Thread.sleep(200);
        }
        assertThat(Files.readString(values)).doesNotContain(fake.refresh()).doesNotContain(fake.access());
        assertThat(Kosa.ok(T, "secret", "ls").stdout()).doesNotContain("oauth_" + removed);
    }
}
