package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
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
 * Keys kept outside, at the broker on the host: curl, speaking through the
 * broker's sockets as a guest would, against loopback servers that want the
 * real key. {@code SecretsIT} does the same from inside a real guest.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BrokerSecretsTest {
    static final String KEY = "sk-test-Kq8vN2rT5wY9zB3dF6hJ1mP4sV7xA0cE";
    static final String SENTINEL = "sk-test-aaaaBBBBccccDDDDeeeeFFFFgggg1234";
    @TempDir
    static Path dir;
    static EventLoopGroup group;
    static TestUpstream keyed;
    static TestUpstream other;
    /** A server whose certificate no CA the broker trusts signed. */
    static TestUpstream stranger;
    static Path caPem;
    static InterceptingBroker intercepting;
    static Broker broker;
    static UnixBridge tls;
    static UnixBridge http;
    static final SecretBindings SECRETS = new SecretBindings(List.of(new SecretBinding("KEYED_TOKEN", "keyed.test", 443,
            "Authorization", "Bearer {}", SENTINEL, KEY), new SecretBinding("STRANGER_TOKEN", "stranger.test", 443,
            "X-Api-Key", "{}", "st-zzzzYYYYxxxxWWWW", "st-KEYkeyKEYkey12")));

    @BeforeAll
    static void start() throws Exception {
        group = new MultiThreadIoEventLoopGroup(1, dev.kosa8.host.NettyTransport.CURRENT.ioHandler());
        keyed = new TestUpstream(dir.resolve("up"), "keyed.test");
        other = new TestUpstream(dir.resolve("up"), "other.test");
        Path repo = Files.createDirectories(dir.resolve("repo"));
        Files.writeString(repo.resolve("HEAD"), "ref: refs/heads/main\n");
        keyed.requireKey(KEY, repo);
        other.requireKey("unrelated-key-000", repo);
        stranger = new TestUpstream(dir.resolve("stranger"), "stranger.test");
        EgressTestSettings test = new EgressTestSettings(Map.of("keyed.test:443", keyed.httpsPort(), "keyed.test:80",
                keyed.httpPort(), "other.test:443", other.httpsPort(), "other.test:80", other.httpPort(),
                "stranger.test:443", stranger.httpsPort()), Map.of(),
                Optional.of(keyed.caPem));
        // an HTTP/2 guest's upstream is offered h2; these servers take HTTP/1.1
        intercepting = InterceptingBroker.start("sbx-secrets", dir,
                // keyed.test is allowed passthrough: its key makes the broker read it all the same, and once the key
                // is revoked it is passed through again
                new EgressPolicy(false, List.of(AllowRule.parse("passthrough keyed.test"),
                        AllowRule.parse("GET,POST other.test/"),
                        AllowRule.parse("stranger.test"))),
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
        keyed.close();
        other.close();
        stranger.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    @BeforeEach
    void secrets() {
        broker.secrets(SECRETS);
    }

    static BrokerTest.Run https(String host, String path, String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of("--cacert", caPem.toString(), "--connect-to",
                host + ":443:127.0.0.1:" + tls.port()));
        args.addAll(List.of(extra));
        args.add("https://" + host + path);
        return BrokerTest.curl(args.toArray(String[]::new));
    }

    static BrokerTest.Run plain(String host, String path, String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of("--connect-to", host + ":80:127.0.0.1:" + http.port()));
        args.addAll(List.of(extra));
        args.add("http://" + host + path);
        return BrokerTest.curl(args.toArray(String[]::new));
    }

    static String audit() throws Exception {
        return Files.readString(dir.resolve("net.log"));
    }

    @Test
    void theBoundHostGetsTheRealKeyWhateverTheGuestSent() throws Exception {
        assertThat(https("keyed.test", "/secret", "-H", "Authorization: Bearer " + SENTINEL).out()).isEqualTo("authorized");
        assertThat(https("keyed.test", "/secret").out()).isEqualTo("authorized");
        assertThat(https("keyed.test", "/secret", "-H", "Authorization: Bearer something-else").out())
                .isEqualTo("authorized");
        assertThat(audit()).contains("\"secret\":\"KEYED_TOKEN\"").doesNotContain(KEY);
    }

    @Test
    void gitGetsBasicAuthWithTheKeyAsPassword() throws Exception {
        BrokerTest.Run r = https("keyed.test", "/repo.git/HEAD", "-A", "git/2.39.2");
        assertThat(r.out()).isEqualTo("ref: refs/heads/main\n");
        assertThat(keyed.seen).anyMatch(s -> s.startsWith("GET /repo.git/HEAD") && s.contains("Basic "
                + Base64.getEncoder().encodeToString(("x-access-token:" + KEY).getBytes(StandardCharsets.UTF_8))));
    }

    @Test
    void responsesCarryThePlaceholderWhereTheUpstreamEchoedTheKey() throws Exception {
        BrokerTest.Run raw = https("keyed.test", "/echo");
        assertThat(raw.out()).contains("Bearer " + SENTINEL).doesNotContain(KEY);
        BrokerTest.Run b64 = https("keyed.test", "/echo-b64");
        String decoded = new String(Base64.getDecoder().decode(b64.out().strip()), StandardCharsets.UTF_8);
        assertThat(decoded).doesNotContain(KEY).contains("GET /echo-b64");
        BrokerTest.Run gz = https("keyed.test", "/echo-gzip", "--compressed");
        assertThat(gz.out()).contains("Bearer " + SENTINEL).doesNotContain(KEY);
        assertThat(keyed.seen).anyMatch(s -> s.startsWith("GET /echo-gzip") && s.contains(KEY));
    }

    @Test
    void thePlaceholderGoingToAnotherHostIsRefusedAsPossibleExfiltration() throws Exception {
        int before = other.seen.size();
        for (BrokerTest.Run r : List.of(
                plain("other.test", "/hello", "-H", "X-Key: " + SENTINEL),
                plain("other.test", "/hello?key=" + SENTINEL),
                https("other.test", "/echo", "-d", "k=" + SENTINEL),
                https("other.test", "/echo", "-d", Base64.getEncoder().encodeToString(("k=" + SENTINEL)
                        .getBytes(StandardCharsets.UTF_8))),
                https("other.test", "/echo", "-d", "k=" + percentEncoded(SENTINEL)))) {
            assertThat(r.out()).contains("possible exfiltration");
        }
        assertThat(other.seen).hasSize(before);
        assertThat(audit()).contains("possible exfiltration", "\"secret\":\"KEYED_TOKEN\"");
    }

    @Test
    void theBoundHostOverPlainHttpGetsNeitherKeyNorPlaceholder() throws Exception {
        assertThat(plain("keyed.test", "/secret", "-H", "Authorization: Bearer " + SENTINEL).out())
                .contains("only over HTTPS");
        assertThat(plain("keyed.test", "/secret").out()).isEqualTo("no key");
        assertThat(keyed.seen).noneMatch(s -> s.contains(SENTINEL));
    }

    @Test
    void aRevokedSecretIsNoLongerSentAndItsHostIsPassedThroughAgain() throws Exception {
        broker.secrets(SecretBindings.NONE);
        BrokerTest.Run r = https("keyed.test", "/secret");
        assertThat(r.exit()).as("TLS now ends at the upstream, whose CA the client does not trust").isNotZero();
        BrokerTest.Run direct = BrokerTest.curl("--cacert", keyed.caPem.toString(), "--connect-to",
                "keyed.test:443:127.0.0.1:" + tls.port(), "https://keyed.test/secret");
        assertThat(direct.out()).isEqualTo("no key");
    }

    @Test
    void noKeyGoesToAServerWhoseCertificateTheBrokerCannotVerify() throws Exception {
        BrokerTest.Run r = https("stranger.test", "/hello");
        assertThat(r.out()).contains("kosa8: upstream stranger.test");
        assertThat(stranger.seen).as("the TLS handshake failed before any request was written").isEmpty();
    }

    static String percentEncoded(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            b.append('%').append(String.format("%02X", (int) c));
        }
        return b.toString();
    }
}
