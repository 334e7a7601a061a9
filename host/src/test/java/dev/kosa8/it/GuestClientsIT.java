package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.egress.TestUpstream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The clients the guest image does not carry, each a real one run in a real guest, completing a request to a
 * host whose TLS the broker ends (interception, the default) with no option of its own: the sandbox's CA is
 * trusted where each client looks (docs/network.md, "The guest's trust"). curl, Python, git and Java's
 * {@code HttpsURLConnection} on the guest's own runtime are {@link NetworkIT}'s.
 *
 * <ul>
 *   <li>Node's {@code fetch} (undici, which has its own CA list and reads {@code NODE_EXTRA_CA_CERTS}): this host's
 *       {@code node} and the libraries it links beyond glibc, copied into the folder;
 *   <li>Java's {@code java.net.http.HttpClient}: a runtime jlinked here with {@code java.net.http}, its trust store
 *       the system one as Debian's JDK packages lay it out ({@code lib/security/cacerts} a link to
 *       {@code /etc/ssl/certs/java/cacerts});
 *   <li>Go's {@code net/http}: a static program built here by the Go of Debian's {@code golang-go}, run once with the
 *       variables {@code kosa8 exec} sets and once with none, so Go's own search of the system bundle is what
 *       trusts the CA.
 * </ul>
 *
 * Each must answer the upstream's {@code hello}, and the sandbox's network log must show the request as the
 * broker read it inside the TLS: a client that had reached the upstream any other way would not be there.
 */
class GuestClientsIT {
    static final Duration T = Duration.ofMinutes(3);
    static final String HOST = "clients.test";
    static final String HELLO = "200 hello from clients.test GET";
    static Path folder;
    static TestUpstream upstream;
    static String id;

    @BeforeAll
    static void boot() throws Exception {
        folder = Kosa.HOME.resolveSibling("it-workspaces").resolve("GuestClientsIT");
        if (Files.exists(folder)) {
            Kosa.deleteTree(folder);
        }
        folder = Files.createDirectories(folder).toRealPath();
        Path servers = Files.createDirectories(Kosa.HOME.resolveSibling("it-upstreams"));
        upstream = new TestUpstream(servers.resolve("clients"), HOST);
        Files.writeString(Kosa.EGRESS_TEST_CONFIG, """
                {"loopback": {"%s:443": %d}, "trustedCa": "%s"}
                """.formatted(HOST, upstream.httpsPort(), upstream.caPem));
        copyNode(folder.resolve("node"));
        jlinkHttpClient(folder.resolve("java"));
        buildGo(folder.resolve("goget"));
        id = Kosa.ok(Duration.ofMinutes(15), "create", "--workspace", folder.toString(), "--allow", HOST)
                .stdout().strip();
    }

    @AfterAll
    static void remove() throws Exception {
        if (id != null) {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
        }
        Files.deleteIfExists(Kosa.EGRESS_TEST_CONFIG);
        if (upstream != null) {
            upstream.close();
        }
    }

    @Test
    void nodesFetchTrustsTheSandboxCaThroughNodeExtraCaCerts() {
        Kosa.Result r = exec("env", "LD_LIBRARY_PATH=/workspace/node/lib", "/workspace/node/node", "-e", """
                fetch("https://%s/hello/node").then(async r => console.log(r.status + " " + await r.text()))
                    .catch(e => { console.error(e, e.cause); process.exit(3); });
                """.formatted(HOST));
        assertThat(r.stdout()).as(() -> r + netLogTail()).isEqualTo(HELLO + "\n");
        assertSeenInsideTheTls("/hello/node", "(node|undici)"); // Node 20 says node, 18 undici
    }

    @Test
    void javasHttpClientTrustsTheSandboxCaThroughTheSystemJavaStore() {
        Kosa.Result link = exec("readlink", "/workspace/java/rt/lib/security/cacerts");
        assertThat(link.stdout()).isEqualTo("/etc/ssl/certs/java/cacerts\n");
        // C1 only, as NetworkIT's Java client runs (a tiered JVM under TCG once died of the emulator's fault)
        // the client's own log of its frames and errors, on stderr: shown only when the test fails
        Kosa.Result r = exec("/workspace/java/rt/bin/java", "-XX:TieredStopAtLevel=1",
                "-Djdk.httpclient.HttpClient.log=errors,frames:control:headers", "-cp", "/workspace/java",
                "HttpClientGet", "https://" + HOST + "/hello/java");
        assertThat(r.stdout()).as(() -> r + netLogTail()).isEqualTo(HELLO + "\n");
        assertSeenInsideTheTls("/hello/java", "Java-http-client");
    }

    @Test
    void gosNetHttpTrustsTheSandboxCaWithAndWithoutTheVariables() {
        Kosa.Result withVariables = exec("/workspace/goget", "https://" + HOST + "/hello/go");
        assertThat(withVariables.stdout()).as(() -> withVariables + netLogTail()).isEqualTo(HELLO + "\n");
        // no SSL_CERT_FILE or SSL_CERT_DIR: Go finds /etc/ssl/certs/ca-certificates.crt on its own
        Kosa.Result bare = exec("env", "-u", "SSL_CERT_FILE", "-u", "SSL_CERT_DIR", "/workspace/goget",
                "https://" + HOST + "/hello/go-bare");
        assertThat(bare.stdout()).as(() -> bare + netLogTail()).isEqualTo(HELLO + "\n");
        assertSeenInsideTheTls("/hello/go", "Go-http-client");
        assertSeenInsideTheTls("/hello/go-bare", "Go-http-client");
    }

    /**
     * The upstream answered {@code path} to a client whose User-Agent starts with the pattern {@code agent}, and
     * the broker logged that path, which it can read only inside the TLS it ended.
     */
    static void assertSeenInsideTheTls(String path, String agent) {
        assertThat(upstream.seen).as("the requests the upstream saw")
                .anyMatch(s -> s.startsWith("GET " + path + "\n")
                        && java.util.regex.Pattern.compile("(?im)^user-agent: " + agent).matcher(s).find());
        String log = Kosa.ok(T, "net", "log", id).stdout();
        assertThat(log).as("the broker read the request inside the TLS")
                .contains("\"host\":\"" + HOST + "\"", "\"method\":\"GET\",\"path\":\"" + path + "\"");
    }

    /**
     * The sandbox's network log's last lines and what the daemon logged of the sandbox (its network link's
     * session among it), for a failure's message.
     */
    static String netLogTail() {
        List<String> lines = Kosa.run(T, "net", "log", id).stdout().lines().toList();
        List<String> daemon;
        try {
            daemon = Files.readAllLines(Kosa.HOME.resolve("data/kosa8d.log")).stream()
                    .filter(l -> l.contains("sandbox " + id)).toList();
        } catch (java.io.IOException e) {
            daemon = List.of("(cannot read the daemon's log: " + e.getMessage() + ")");
        }
        return "\n--- the sandbox's network log, last lines ---\n"
                + String.join("\n", lines.subList(Math.max(0, lines.size() - 12), lines.size()))
                + "\n--- the daemon's log of the sandbox, last lines ---\n"
                + String.join("\n", daemon.subList(Math.max(0, daemon.size() - 20), daemon.size()));
    }

    static Kosa.Result exec(String... command) {
        List<String> args = new ArrayList<>(List.of("exec", id, "--"));
        args.addAll(List.of(command));
        return Kosa.run(T, args.toArray(String[]::new));
    }

    /**
     * This host's {@code node} and every library it links that glibc does not provide (the guest has its own
     * glibc, the same Debian release's): a Debian-packaged node links libnode and more, another build fewer.
     */
    static void copyNode(Path dir) throws Exception {
        Path lib = Files.createDirectories(dir.resolve("lib"));
        Path node = Path.of(run(Path.of("."), "sh", "-c", "readlink -f \"$(command -v node)\"").strip());
        Files.copy(node, dir.resolve("node"));
        for (String line : run(Path.of("."), "ldd", node.toString()).lines().toList()) {
            String[] parts = line.strip().split("\\s+");
            if (parts.length >= 3 && parts[1].equals("=>") && parts[2].startsWith("/")
                    && !parts[0].matches("(libc|libm|libdl|libpthread|librt|ld-linux.*)\\.so.*")) {
                Files.copy(Path.of(parts[2]).toRealPath(), lib.resolve(parts[0]));
            }
        }
    }

    /** A runtime with {@code java.net.http}, its store a link to the system Java store, and the client, compiled. */
    static void jlinkHttpClient(Path dir) throws Exception {
        Path javaHome = Path.of(System.getProperty("java.home"));
        Files.createDirectories(dir);
        run(dir, javaHome.resolve("bin/jlink").toString(), "--add-modules", "java.net.http", "--no-header-files",
                "--no-man-pages", "--strip-debug", "--output", dir.resolve("rt").toString());
        Path store = dir.resolve("rt/lib/security/cacerts");
        Files.delete(store);
        Files.createSymbolicLink(store, Path.of("/etc/ssl/certs/java/cacerts"));
        Path src = dir.resolve("HttpClientGet.java");
        Files.writeString(src, """
                import java.net.URI;
                import java.net.http.HttpClient;
                import java.net.http.HttpRequest;
                import java.net.http.HttpResponse;
                import java.time.Duration;

                public class HttpClientGet {
                    public static void main(String[] args) throws Exception {
                        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(60)).build();
                        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(args[0]))
                                .timeout(Duration.ofSeconds(90)).build(), HttpResponse.BodyHandlers.ofString());
                        System.out.println(r.statusCode() + " " + r.body());
                    }
                }
                """);
        int compiled = javax.tools.ToolProvider.getSystemJavaCompiler().run(null, null, null,
                "--release", String.valueOf(Runtime.version().feature()), "-d", dir.toString(), src.toString());
        assertThat(compiled).isZero();
    }

    /** A static Go program that prints the status and body of a GET (no cgo: Go's own resolver and TLS). */
    static void buildGo(Path out) throws Exception {
        Path src = Files.createDirectories(Kosa.HOME.resolveSibling("it-go")).resolve("goget.go");
        Files.writeString(src, """
                package main

                import (
                	"fmt"
                	"io"
                	"net/http"
                	"os"
                	"time"
                )

                func main() {
                	client := &http.Client{Timeout: 90 * time.Second}
                	r, err := client.Get(os.Args[1])
                	if err != nil {
                		fmt.Fprintln(os.Stderr, err)
                		os.Exit(3)
                	}
                	body, _ := io.ReadAll(r.Body)
                	fmt.Printf("%d %s\\n", r.StatusCode, body)
                }
                """);
        Path cache = src.resolveSibling("cache");
        ProcessBuilder pb = new ProcessBuilder("go", "build", "-o", out.toString(), src.toString())
                .directory(src.getParent().toFile()).redirectErrorStream(true);
        pb.environment().putAll(java.util.Map.of("CGO_ENABLED", "0", "GOCACHE", cache.toString(), "GOPATH",
                src.resolveSibling("gopath").toString(), "GO111MODULE", "off"));
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as("go build: %s", output).isZero();
    }

    static String run(Path dir, String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as("%s: %s", String.join(" ", cmd), out).isZero();
        return out;
    }
}
