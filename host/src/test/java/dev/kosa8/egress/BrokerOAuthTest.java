package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.secrets.OAuthProvider;
import dev.kosa8.secrets.OAuthProviders;
import dev.kosa8.secrets.TokenResponses;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Logins made inside, kept outside: curl, speaking through the broker's TLS
 * socket as a guest would, logs in at a fake token endpoint, uses the API and
 * refreshes, and only ever holds placeholders. {@code OAuthLoginIT} does the
 * same from inside a real guest.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BrokerOAuthTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final OAuthProviders PROVIDERS = new OAuthProviders(List.of(new OAuthProvider("fake",
            List.of("token.test/oauth/token"), List.of("api.test"))));
    @TempDir
    static Path dir;
    static EventLoopGroup group;
    static TestUpstream token;
    static TestUpstream api;
    static TestUpstream other;
    static FakeOAuth fake;
    static Path caPem;
    static InterceptingBroker intercepting;
    static Broker broker;
    static UnixBridge tls;
    static UnixBridge http;
    static final List<TokenResponses.Token> kept = Collections.synchronizedList(new ArrayList<>());

    @BeforeAll
    static void start() throws Exception {
        group = new MultiThreadIoEventLoopGroup(1, dev.kosa8.host.NettyTransport.CURRENT.ioHandler());
        token = new TestUpstream(dir.resolve("up"), "token.test");
        api = new TestUpstream(dir.resolve("up"), "api.test");
        other = new TestUpstream(dir.resolve("up"), "other.test");
        other.requireKey("unrelated-key-000", Files.createDirectories(dir.resolve("repo")));
        fake = new FakeOAuth(token, "/oauth/token", api, "/v1/me");
        EgressTestSettings test = new EgressTestSettings(Map.of("token.test:443", token.httpsPort(),
                "api.test:443", api.httpsPort(), "other.test:443", other.httpsPort()), Map.of(),
                Optional.of(token.caPem));
        // an HTTP/2 guest's upstream is offered h2; these servers take HTTP/1.1
        intercepting = InterceptingBroker.start("sbx-oauth", dir,
                // the token host is allowed passthrough: its token responses are read all the same
                new EgressPolicy(false, List.of(AllowRule.parse("passthrough token.test"), AllowRule.parse("api.test"),
                        AllowRule.parse("other.test"))),
                test, m -> { }, group);
        broker = intercepting.broker();
        caPem = intercepting.caPem();
        tls = intercepting.tls();
        http = new UnixBridge(broker.sockets().get(Listener.HTTP));
    }

    @AfterAll
    static void stop() throws Exception {
        http.close();
        intercepting.close();
        token.close();
        api.close();
        other.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    @BeforeEach
    void freshLogins() {
        broker.logins(PROVIDERS, (provider, t) -> kept.add(t));
        kept.clear();
        fake.mode = FakeOAuth.Mode.JSON;
    }

    static BrokerTest.Run https(String host, String path, String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of("--cacert", caPem.toString(), "--connect-to",
                host + ":443:127.0.0.1:" + tls.port()));
        args.addAll(List.of(extra));
        args.add("https://" + host + path);
        return BrokerTest.curl(args.toArray(String[]::new));
    }

    /** What the guest holds after a login: the token response as it got it. */
    static JsonNode login() throws Exception {
        BrokerTest.Run r = https("token.test", "/oauth/token", "-d", "grant_type=authorization_code", "-d",
                "code=" + FakeOAuth.CODE);
        assertThat(r.exit()).as(r.err()).isZero();
        assertNoRealToken(r.out());
        return JSON.readTree(r.out());
    }

    static void assertNoRealToken(String seenByGuest) {
        for (String real : List.copyOf(fake.issued)) {
            assertThat(seenByGuest).doesNotContain(real);
        }
    }

    @Test
    void aLoginLeavesOnlySameShapedPlaceholdersAndTheApiGetsTheRealToken() throws Exception {
        JsonNode got = login();
        String access = got.get("access_token").asText();
        String refresh = got.get("refresh_token").asText();
        String id = got.get("id_token").asText();
        assertThat(access).isNotEqualTo(fake.access()).hasSameSizeAs(fake.access()).startsWith("fake-at01-");
        assertThat(refresh).isNotEqualTo(fake.refresh()).hasSameSizeAs(fake.refresh()).matches("[A-Za-z0-9]//[A-Za-z0-9]+");
        String realId = fake.issued.get(fake.issued.size() - 1);
        assertThat(id).hasSameSizeAs(realId).isNotEqualTo(realId)
                .startsWith(realId.substring(0, realId.lastIndexOf('.') + 1)); // the claims stay readable
        assertThat(got.get("expires_in").asInt()).isEqualTo(3600);

        BrokerTest.Run use = https("api.test", "/v1/me", "-H", "Authorization: Bearer " + access);
        assertThat(use.out()).isEqualTo("hello, token " + fake.generation());
        assertThat(fake.apiAuthorizations).last().isEqualTo("Bearer " + fake.access());
        assertThat(https("api.test", "/v1/me").out()).as("no placeholder sent, none put in").isEqualTo("unauthorized");

        assertThat(kept).extracting(TokenResponses.Token::real).containsExactlyInAnyOrder(fake.access(),
                fake.refresh(), realId);
        String audit = auditOnceItHas("oauth-fake learned access_token,refresh_token,id_token");
        assertNoRealToken(audit);
    }

    @Test
    void aRefreshWithThePlaceholderGetsNewPlaceholdersAndTheApiTheNewToken() throws Exception {
        String refresh = login().get("refresh_token").asText();
        String firstReal = fake.refresh();
        int first = fake.generation();
        BrokerTest.Run r = https("token.test", "/oauth/token", "--data-urlencode", "grant_type=refresh_token",
                "--data-urlencode", "refresh_token=" + refresh);
        assertThat(r.exit()).as(r.err()).isZero();
        assertNoRealToken(r.out());
        assertThat(fake.tokenRequests).last().asString().contains("refresh_token=" + firstReal.replace("/", "%2F"));
        JsonNode second = JSON.readTree(r.out());
        auditOnceItHas("\"secret\":\"oauth refresh_token,oauth-fake learned access_token,refresh_token,id_token\"");
        assertThat(https("api.test", "/v1/me", "-H", "Authorization: Bearer " + second.get("access_token").asText())
                .out()).isEqualTo("hello, token " + (first + 1));
        assertThat(fake.apiAuthorizations).last().isEqualTo("Bearer " + fake.access());

        // and again in JSON, with the second refresh placeholder
        BrokerTest.Run json = https("token.test", "/oauth/token", "-H", "Content-Type: application/json", "-d",
                "{\"grant_type\":\"refresh_token\",\"refresh_token\":\"" + second.get("refresh_token").asText() + "\"}");
        assertNoRealToken(json.out());
        assertThat(https("api.test", "/v1/me", "-H", "Authorization: Bearer "
                + JSON.readTree(json.out()).get("access_token").asText()).out()).isEqualTo("hello, token " + (first + 2));
    }

    @Test
    void gzipAndChunkedTokenResponsesAreReadWhole() throws Exception {
        fake.mode = FakeOAuth.Mode.GZIP;
        BrokerTest.Run gz = https("token.test", "/oauth/token", "--compressed", "-d", "grant_type=authorization_code",
                "-d", "code=" + FakeOAuth.CODE);
        assertNoRealToken(gz.out());
        assertThat(https("api.test", "/v1/me", "-H", "Authorization: Bearer "
                + JSON.readTree(gz.out()).get("access_token").asText()).out()).startsWith("hello, token");
        fake.mode = FakeOAuth.Mode.CHUNKED;
        BrokerTest.Run chunked = https("token.test", "/oauth/token", "-d", "grant_type=authorization_code",
                "-d", "code=" + FakeOAuth.CODE);
        assertNoRealToken(chunked.out());
        assertThat(https("api.test", "/v1/me", "-H", "Authorization: Bearer "
                + JSON.readTree(chunked.out()).get("access_token").asText()).out()).startsWith("hello, token");
    }

    @Test
    void aTokenResponseTooBigOrNotJsonIsRefusedAndNoneOfItPasses() throws Exception {
        fake.mode = FakeOAuth.Mode.HUGE;
        BrokerTest.Run huge = https("token.test", "/oauth/token", "-i", "-d", "grant_type=authorization_code",
                "-d", "code=" + FakeOAuth.CODE);
        assertThat(huge.out()).matches("(?s)HTTP/[0-9.]+ 502 .*").contains("over 65536 bytes");
        assertNoRealToken(huge.out());
        fake.mode = FakeOAuth.Mode.FORM;
        BrokerTest.Run form = https("token.test", "/oauth/token", "-i", "-d", "grant_type=authorization_code",
                "-d", "code=" + FakeOAuth.CODE);
        assertThat(form.out()).matches("(?s)HTTP/[0-9.]+ 502 .*").contains("not a JSON object");
        assertNoRealToken(form.out());
        auditOnceItHas("over 65536 bytes");
        String audit = auditOnceItHas("not a JSON object");
        assertNoRealToken(audit);
        assertThat(kept).isEmpty();
    }

    @Test
    void theAccessPlaceholderSentToAnotherHostIsRefusedAsPossibleExfiltration() throws Exception {
        String access = login().get("access_token").asText();
        BrokerTest.Run r = https("other.test", "/echo", "-i", "-H", "Authorization: Bearer " + access);
        assertThat(r.out()).matches("(?s)HTTP/[0-9.]+ 403 .*").contains("possible exfiltration");
        assertThat(other.seen).noneMatch(s -> s.contains(access) || s.contains(fake.access()));
    }

    @Test
    void theTokenEndpointOverPlainHttpIsRefusedUnsent() throws Exception {
        int before = fake.tokenRequests.size();
        BrokerTest.Run r = BrokerTest.curl("-i", "--connect-to", "token.test:80:127.0.0.1:" + http.port(), "-d",
                "grant_type=authorization_code", "-d", "code=" + FakeOAuth.CODE, "http://token.test/oauth/token");
        assertThat(r.out()).matches("(?s)HTTP/[0-9.]+ 403 .*").contains("over HTTPS only");
        assertThat(fake.tokenRequests).hasSize(before);
    }

    @Test
    void aMalformedOrOversizedRefreshIsRefusedBeforeTheTokenEndpoint() throws Exception {
        login();
        int before = fake.tokenRequests.size();
        BrokerTest.Run broken = https("token.test", "/oauth/token", "-i", "-H", "Content-Type: application/json",
                "-d", "{\"grant_type\":");
        assertThat(broken.out()).matches("(?s)HTTP/[0-9.]+ 400 .*").contains("says JSON but is not");
        BrokerTest.Run big = https("token.test", "/oauth/token", "-i", "-d", "pad=" + "x".repeat(70_000));
        assertThat(big.out()).matches("(?s)HTTP/[0-9.]+ 400 .*").contains("over the 65536");
        assertThat(fake.tokenRequests).hasSize(before);
    }

    /**
     * The audit log once it has {@code line}: the broker writes an exchange's line when the exchange is over, which
     * may be just after the client has read the response (failing with the log as it is after 10 s).
     */
    private static String auditOnceItHas(String line) throws Exception {
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(10).toNanos();
        String audit;
        while (!(audit = Files.readString(dir.resolve("net.log"))).contains(line) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(audit).contains(line);
        return audit;
    }
}
