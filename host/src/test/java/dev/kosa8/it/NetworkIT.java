package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.egress.TestUpstream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The closed network from inside a real guest: real clients (curl, git,
 * python, Java) reach allowed names on real loopback servers through the
 * broker, and every way around it fails. The test names are mapped to the
 * loopback servers by the host-side test setting {@code KOSA8_EGRESS_TEST_CONFIG}
 * ({@link Kosa#EGRESS_TEST_CONFIG}), which also makes the broker trust the
 * servers' test CAs when it verifies them.
 *
 * <p>{@code api.test} and {@code other.test} (one server with both names) are
 * allowed {@code --passthrough}: TLS to them is relayed unread, and the guest
 * trusts their test CA because the test hands it the CA's certificate.
 * Every other host's TLS ends at the broker (the default), and the guest
 * trusts it through the sandbox's CA: {@code front.test}, a server that also
 * serves {@code hidden.test} (which is not allowed), as a CDN does, is where
 * domain fronting and HTTP/2 connection coalescing are tried.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NetworkIT {
    static final Duration T = Duration.ofMinutes(2);
    static Path folder;
    static TestUpstream api;
    static TestUpstream late;
    static TestUpstream rules;
    static TestUpstream front;
    static dev.kosa8.egress.WebSocketEcho ws;
    static String id;

    @BeforeAll
    static void boot() throws Exception {
        folder = Kosa.HOME.resolveSibling("it-workspaces").resolve("NetworkIT");
        if (Files.exists(folder)) {
            Kosa.deleteTree(folder);
        }
        Files.createDirectories(folder);
        folder = folder.toRealPath();
        Path servers = Files.createDirectories(Kosa.HOME.resolveSibling("it-upstreams"));
        api = new TestUpstream(servers.resolve("api"), "api.test");
        late = new TestUpstream(servers.resolve("late"), "late.test");
        rules = new TestUpstream(servers.resolve("rules"), "rules.test");
        front = new TestUpstream(servers.resolve("front"), "front.test");
        var wsCa = dev.kosa8.egress.tls.SandboxCa.loadOrCreate(servers.resolve("ws-ca"), "test-upstream");
        ws = new dev.kosa8.egress.WebSocketEcho(wsCa, "ws.test");
        Files.copy(api.caPem, folder.resolve("api-ca.pem"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Files.copy(late.caPem, folder.resolve("late-ca.pem"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Path repo = gitRepository(servers.resolve("repo.git"));
        api.serveFiles("repo.git", repo);
        front.serveFiles("repo.git", repo);
        // what the broker trusts upstream: the test CAs of the servers whose TLS it ends (one PEM, several CAs)
        Path trusted = servers.resolve("trusted-cas.pem");
        Files.writeString(trusted, Files.readString(rules.caPem) + Files.readString(late.caPem)
                + Files.readString(front.caPem) + wsCa.certificatePem());
        Files.writeString(Kosa.EGRESS_TEST_CONFIG, """
                {"loopback": {"api.test:443": %d, "api.test:80": %d, "other.test:443": %d, "late.test:443": %d,
                              "rules.test:443": %d, "front.test:443": %d, "hidden.test:443": %d, "ws.test:443": %d},
                 "resolve": {"rebind.test": "127.0.0.1"},
                 "trustedCa": "%s"}
                """.formatted(api.httpsPort(), api.httpPort(), api.httpsPort(), late.httpsPort(), rules.httpsPort(),
                front.httpsPort(), front.httpsPort(), ws.port(), trusted));
        Kosa.Result r = Kosa.ok(Duration.ofMinutes(15), "create", "--workspace", folder.toString(),
                "--passthrough", "api.test", "--passthrough", "other.test", "--allow", "rebind.test",
                "--allow", "GET,HEAD rules.test/hello", "--allow", "front.test", "--allow", "ws.test");
        id = r.stdout().strip();
    }

    @AfterAll
    static void remove() throws Exception {
        if (id != null) {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
        }
        Files.deleteIfExists(Kosa.EGRESS_TEST_CONFIG);
        if (api != null) {
            api.close();
        }
        if (late != null) {
            late.close();
        }
        if (rules != null) {
            rules.close();
        }
        if (front != null) {
            front.close();
        }
        if (ws != null) {
            ws.close();
        }
    }

    static Path gitRepository(Path bare) throws Exception {
        if (Files.exists(bare)) {
            Kosa.deleteTree(bare);
        }
        Path work = Files.createTempDirectory("kosa8-it-repo");
        Files.writeString(work.resolve("README"), "cloned through the broker\n");
        run(work, "git", "init", "-q");
        run(work, "git", "add", "README");
        run(work, "git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first");
        run(work, "git", "clone", "-q", "--bare", work.toString(), bare.toString());
        run(bare, "git", "update-server-info");
        Kosa.deleteTree(work);
        return bare;
    }

    static void run(Path dir, String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).inheritIO().start();
        assertThat(p.waitFor()).as(String.join(" ", cmd)).isZero();
    }

    Kosa.Result exec(String... command) {
        String[] args = new String[command.length + 3];
        args[0] = "exec";
        args[1] = id;
        args[2] = "--";
        System.arraycopy(command, 0, args, 3, command.length);
        return Kosa.run(T, args);
    }

    Kosa.Result sh(String script) {
        return exec("sh", "-c", script);
    }

    String netLog() {
        return Kosa.ok(T, "net", "log", id).stdout();
    }

    // --- allowed traffic, by every kind of client ---

    @Test
    @Order(1)
    void curlReachesAnAllowedHostThroughTheProxyItIsGiven() {
        Kosa.Result r = exec("curl", "-sS", "--max-time", "60", "--cacert", "/workspace/api-ca.pem",
                "https://api.test/hello");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.stdout()).isEqualTo("hello from api.test GET");
        assertThat(netLog()).contains("\"listener\":\"proxy\"", "\"host\":\"api.test\"", "\"decision\":\"allow\"");
    }

    @Test
    @Order(2)
    void aProgramIgnoringProxySettingsGoesThroughTheBrokersDnsAndSniRouting() {
        Kosa.Result dns = exec("getent", "hosts", "api.test");
        assertThat(dns.stdout()).as(dns.toString()).startsWith("10.0.2.100");
        Kosa.Result r = exec("curl", "-sS", "--max-time", "60", "--noproxy", "*", "--cacert",
                "/workspace/api-ca.pem", "https://api.test/hello");
        assertThat(r.stdout()).as(r.toString()).isEqualTo("hello from api.test GET");
        Kosa.Result plain = exec("curl", "-sS", "--max-time", "60", "--noproxy", "*", "http://api.test/hello");
        assertThat(plain.stdout()).as(plain.toString()).isEqualTo("hello from api.test GET");
        assertThat(netLog()).contains("\"listener\":\"tls\"", "\"listener\":\"http\"");
    }

    @Test
    @Order(3)
    void pythonUrllibAndGitCloneOverHttpsWork() {
        Kosa.Result py = exec("python3", "-c", "import ssl, urllib.request; ctx = ssl.create_default_context("
                + "cafile='/workspace/api-ca.pem'); print(urllib.request.urlopen('https://api.test/hello', "
                + "context=ctx, timeout=60).read().decode())");
        assertThat(py.stdout()).as(py.toString()).contains("hello from api.test GET");
        // GIT_SSL_CAINFO is set for every exec (the system bundle with the sandbox CA); a command may name its own
        Kosa.Result git = sh("GIT_SSL_CAINFO=/workspace/api-ca.pem git clone -q https://api.test/repo.git "
                + "/tmp/repo && cat /tmp/repo/README");
        assertThat(git.stdout()).as(git.toString()).contains("cloned through the broker");
    }

    // --- denied traffic fails clearly ---

    @Test
    @Order(4)
    void aDeniedHostFailsWithAnAnswerThatSaysHowToAllowIt() {
        Kosa.Result tls = exec("curl", "-sS", "--max-time", "60", "https://denied.test/");
        assertThat(tls.exitCode()).isNotZero();
        assertThat(tls.stderr()).contains("403");
        Kosa.Result plain = exec("curl", "-sS", "--max-time", "60", "http://denied.test/");
        assertThat(plain.stdout()).as(plain.toString()).contains("kosa8 allow " + id + " denied.test");
        Kosa.Result dns = exec("getent", "hosts", "denied.test");
        assertThat(dns.exitCode()).isNotZero();
        assertThat(netLog()).contains("\"host\":\"denied.test\"", "\"decision\":\"deny\"");
    }

    @Test
    @Order(5)
    void allowAndDenyTakeEffectOnTheRunningSandbox() {
        // intercepted, as every host allowed without --passthrough: the guest trusts it through the sandbox CA
        String curl = "curl -sS --max-time 60 https://late.test/hello";
        assertThat(sh(curl).exitCode()).isNotZero();
        Kosa.Result allow = Kosa.ok(T, "allow", id, "late.test");
        assertThat(allow.stdout()).contains("late.test");
        assertThat(sh(curl).stdout()).isEqualTo("hello from late.test GET");
        assertThat(Kosa.ok(T, "net", id).stdout()).contains("api.test", "late.test");
        Kosa.ok(T, "deny", id, "late.test");
        assertThat(sh(curl).exitCode()).isNotZero();
        assertThat(Kosa.run(T, "deny", id, "never-allowed.test").stderr()).contains("not on the allow-list");
    }

    @Test
    @Order(5)
    void aPresetAllowsItsHostsAtOnceAndEachCanBeDeniedAgain() {
        Kosa.Result allow = Kosa.ok(T, "allow", id, "@pypi");
        assertThat(allow.stdout()).contains("pypi.org", "files.pythonhosted.org");
        assertThat(Kosa.ok(T, "net", id).stdout()).contains("pypi.org", "files.pythonhosted.org");
        // the guest's DNS answers the preset's names now (with the broker's address), and not after the deny
        assertThat(exec("getent", "hosts", "pypi.org").stdout()).contains("10.0.2.100");
        Kosa.ok(T, "deny", id, "pypi.org");
        Kosa.ok(T, "deny", id, "files.pythonhosted.org");
        assertThat(Kosa.ok(T, "net", id).stdout()).doesNotContain("pypi.org", "pythonhosted");
        assertThat(exec("getent", "hosts", "pypi.org").exitCode()).isNotZero();
    }

    @Test
    @Order(5)
    void netLogFollowPrintsNewLinesAsTheyCome() throws Exception {
        Process follow = Kosa.builder("net", "log", id, "-f").redirectErrorStream(true).start();
        try {
            StringBuffer seen = new StringBuffer();
            Thread reader = Thread.ofVirtual().start(() -> {
                try (var in = new java.io.BufferedReader(new java.io.InputStreamReader(follow.getInputStream(),
                        java.nio.charset.StandardCharsets.UTF_8))) {
                    for (String line; (line = in.readLine()) != null; ) {
                        seen.append(line).append('\n');
                    }
                } catch (java.io.IOException ended) {
                    // the follower was stopped
                }
            });
            // a name asked only now, after the follower printed what was there
            String name = "follow-" + System.nanoTime() + ".test";
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!seen.toString().contains(name) && System.nanoTime() < deadline) {
                exec("getent", "hosts", name);
                Thread.sleep(500);
            }
            assertThat(seen.toString()).as("what `net log -f` printed").contains("\"host\":\"" + name + "\"");
            assertThat(follow.isAlive()).as("still following").isTrue();
            follow.destroy();
            reader.join(Duration.ofSeconds(10));
        } finally {
            follow.destroyForcibly();
        }
    }

    // --- interception: a host whose rules look inside requests ---

    @Test
    @Order(6)
    void aHostWithRequestRulesIsInterceptedTrustedByEveryClientAndJudgedPerRequest() {
        // no --cacert: the sandbox CA is in the guest's system bundle and in the variables clients read
        Kosa.Result get = exec("curl", "-sS", "--max-time", "60", "https://rules.test/hello");
        assertThat(get.stdout()).as(get.toString()).isEqualTo("hello from rules.test GET");
        Kosa.Result py = exec("python3", "-c", "import urllib.request; print(urllib.request.urlopen("
                + "'https://rules.test/hello', timeout=60).read().decode())");
        assertThat(py.stdout()).as(py.toString()).contains("hello from rules.test GET");
        Kosa.Result post = exec("curl", "-sS", "--max-time", "60", "-X", "POST", "-d", "x", "https://rules.test/hello");
        assertThat(post.stdout()).as(post.toString()).contains("POST /hello on rules.test is outside the rules",
                "kosa8 allow " + id);
        Kosa.Result other = exec("curl", "-sS", "--max-time", "60", "https://rules.test/redirect");
        assertThat(other.stdout()).contains("GET /redirect on rules.test is outside the rules");
        assertThat(netLog()).contains("\"method\":\"POST\",\"path\":\"/hello\"");
    }

    @Test
    @Order(7)
    void insideInterceptedTlsAHostDifferentFromTheServerNameIsRefused() {
        // HTTP/1.1 asked for: curl offers h2, which the broker now takes (the h2 stream's refusal is tested below)
        Kosa.Result r = exec("curl", "-sS", "--http1.1", "--max-time", "60", "-i", "-H", "Host: api.test",
                "https://rules.test/hello");
        // (after the proxy's own "200 Connection established")
        assertThat(r.stdout()).as(r.toString()).contains("HTTP/1.1 421 Misdirected Request").doesNotContain("hello from");
        assertThat(netLog()).contains("differs from the TLS server name rules.test");
    }

    @Test
    @Order(8)
    void theGuestHoldsTheCaCertificateButNeverItsKey() throws Exception {
        Path caDir = Kosa.HOME.resolve("data/sandboxes").resolve(id).resolve("ca");
        // a probe within one line of each PEM, so a line break cannot hide a match
        String keyProbe = middleLine(caDir.resolve("ca.key")).substring(0, 40);
        String certProbe = middleLine(caDir.resolve("ca.pem")).substring(0, 40);
        String dirs = "/etc /run /usr/local /root /tmp /var";
        Kosa.Result r = sh("echo cert-in:; grep -rlF '" + certProbe + "' " + dirs + " 2>/dev/null; "
                + "echo key-in:; grep -rlF '" + keyProbe + "' /proc/cmdline " + dirs + " 2>/dev/null; echo end");
        String out = r.stdout();
        // the same scan finds the certificate, so finding no key is a real result
        assertThat(out.substring(0, out.indexOf("key-in:"))).as(r.toString()).contains("/etc/kosa8/ca.pem");
        // and this sandbox was restored from a booted template, whose own CA the guest's init installed: finding
        // the sandbox's certificate shows it replaced the template's (another architecture's guest boots cold,
        // its init installing the sandbox's own)
        Process info = new ProcessBuilder("qemu-img", "info", "-U", "--output=json", Kosa.HOME.resolve("data/sandboxes")
                .resolve(id).resolve("root.qcow2").toString()).redirectErrorStream(true).start();
        String disk = new String(info.getInputStream().readAllBytes());
        if (!Kosa.foreignGuests()) {
            assertThat(disk).as("the sandbox's disk is a template's overlay")
                    .containsPattern("\"backing-filename\": \"[^\"]*/templates/[^\"]*/disk.qcow2\"");
        }
        assertThat(out.substring(out.indexOf("key-in:"))).as(r.toString()).isEqualTo("key-in:\nend\n");
    }

    @Test
    @Order(9)
    void aJavaProgramOnTheGuestsOwnRuntimeTrustsTheSandboxCaWithNoOptions() throws Exception {
        // compiled here (the guest's runtime has java.base only, no compiler), run there with its default trust store
        Path src = Files.createDirectories(Kosa.HOME.resolveSibling("it-java")).resolve("JavaGet.java");
        Files.writeString(src, """
                public class JavaGet {
                    public static void main(String[] args) throws Exception {
                        var c = (javax.net.ssl.HttpsURLConnection) java.net.URI.create(args[0]).toURL().openConnection();
                        c.setConnectTimeout(60_000);
                        c.setReadTimeout(60_000);
                        System.out.println(c.getResponseCode() + " " + new String(c.getInputStream().readAllBytes()));
                    }
                }
                """);
        int compiled = javax.tools.ToolProvider.getSystemJavaCompiler().run(null, null, null,
                "--release", String.valueOf(Runtime.version().feature()), "-d", folder.toString(), src.toString());
        assertThat(compiled).isZero();
        // C1 only, as the agent runs: under TCG (QEMU 7.2, two vCPUs) a tiered JVM here once died of a general
        // protection fault on a method entry HotSpot had just patched to a jump (code modified while another vCPU
        // runs it); that is the emulator's, not the trust store's, and it is no trust option
        Kosa.Result r = exec("/opt/kosa8/jre/bin/java", "-XX:TieredStopAtLevel=1", "-cp", "/workspace", "JavaGet",
                "https://rules.test/hello");
        assertThat(r.stdout()).as(() -> r + "\n--- the sandbox's net log, last lines ---\n" + String.join("\n",
                netLog().lines().toList().reversed().stream().limit(12).toList().reversed()))
                .isEqualTo("200 hello from rules.test GET\n");
        // the store the runtime read is the guest's system one (as on Debian's JDKs), holding the sandbox's CA
        Kosa.Result link = exec("readlink", "/opt/kosa8/jre/lib/security/cacerts");
        assertThat(link.stdout()).isEqualTo("/etc/ssl/certs/java/cacerts\n");
        // and where Debian's ca-certificates-java looks when a command installs a JDK: a link into the local CAs
        Kosa.Result debian = exec("readlink", "/etc/ssl/certs/kosa8-sandbox.pem");
        assertThat(debian.stdout()).isEqualTo("/usr/local/share/ca-certificates/kosa8-sandbox.crt\n");
        // this sandbox came from a template, so all of that was written as files by the agent, not by the
        // fallback command (which would pass the checks above as well, only slower)
        try (var templates = Files.walk(Kosa.HOME.resolve("data/templates"), 2)) {
            assertThat(templates.filter(f -> f.getFileName().toString().equals("template.json")).map(f -> {
                try {
                    return Files.readString(f);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).toList()).as("a template with a network lays out the CA's places, after its agent rehearsed its "
                    + "restores").anyMatch(j -> j.contains("\"trustLaidOut\" : true")
                    && j.matches("(?s).*\"rehearsals\" : [1-9][0-9]*.*"));
        }
        assertThat(Files.readString(Kosa.HOME.resolve("data/kosa8d.log")))
                .doesNotContain("writing the sandbox CA's files failed");
        assertThat(exec("cat", "/etc/kosa8/ca.pem").stdout()).as("the PEM the files' way wrote")
                .isEqualTo(exec("cat", "/usr/local/share/ca-certificates/kosa8-sandbox.crt").stdout())
                .isNotEmpty();
    }

    static String middleLine(Path pem) throws Exception {
        var body = Files.readString(pem).lines().filter(l -> !l.startsWith("-----")).toList();
        return body.get(body.size() / 2 - 1);
    }

    // --- attacks from inside the guest ---

    @Test
    @Order(10)
    void rawTcpToAPublicAddressTheHostOrAnUnforwardedPortGoesNowhere() {
        String script = """
                import socket
                for host, port in [("1.1.1.1", 443), ("10.0.2.2", %d), ("10.0.2.2", 22), ("10.0.2.100", 22),
                                   ("10.0.2.3", 53)]:
                    try:
                        socket.create_connection((host, port), timeout=5).close()
                        print("CONNECTED", host, port)
                    except OSError as e:
                        print("refused", host, port, e)
                """.formatted(api.httpPort());
        Kosa.Result r = exec("python3", "-c", script);
        assertThat(r.stdout()).as(r.toString()).doesNotContain("CONNECTED").contains("refused 1.1.1.1");
    }

    @Test
    @Order(11)
    void udpIcmpIpv6AndSlirpDnsGetNoAnswer() {
        String script = """
                import socket, struct
                q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + b"\\x03api\\x04test\\x00\\x00\\x01\\x00\\x01"
                for host in ["10.0.2.3", "10.0.2.100", "8.8.8.8", "10.0.2.2"]:
                    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
                    try:
                        s.sendto(q, (host, 53)); s.recvfrom(512); print("UDP-ANSWER", host)
                    except OSError as e:
                        print("udp silent", host, e)
                # the guest has no route at all (no network device); these addresses beyond it say whether
                # ICMP gets out
                for host in ["1.1.1.1", "192.168.1.1"]:
                    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); s.settimeout(3)
                    echo = struct.pack(">BBHHH", 8, 0, 0xf7fd, 1, 1)
                    try:
                        s.sendto(echo, (host, 0))
                        while True:
                            data, addr = s.recvfrom(1500)
                            if data[20] == 0: print("ICMP-REPLY", host); break
                    except OSError as e:
                        print("icmp silent", host, e)
                try:
                    socket.create_connection(("2606:4700:4700::1111", 443), timeout=5); print("IPV6-CONNECTED")
                except OSError as e:
                    print("ipv6 refused", e)
                """;
        Kosa.Result r = exec("python3", "-c", script);
        assertThat(r.stdout()).as(r.toString()).doesNotContain("UDP-ANSWER", "ICMP-REPLY", "IPV6-CONNECTED")
                .contains("udp silent 10.0.2.3", "icmp silent 1.1.1.1", "ipv6 refused");
    }

    @Test
    @Order(12)
    void dnsExfiltrationThroughRandomSubdomainsGetsNxdomainAndIsLogged() {
        Kosa.Result r = exec("python3", "-c", """
                import socket, secrets
                for i in range(20):
                    name = secrets.token_hex(12) + ".test"
                    try:
                        socket.getaddrinfo(name, 443); print("RESOLVED", name)
                    except socket.gaierror:
                        print("nx", name)
                """);
        assertThat(r.stdout()).as(r.toString()).doesNotContain("RESOLVED");
        String first = r.stdout().lines().findFirst().orElseThrow().substring(3);
        assertThat(netLog()).contains("\"listener\":\"dns\",\"host\":\"" + first + "\"");
    }

    @Test
    @Order(13)
    void connectToAnIpLiteralAndAnSniDifferentFromTheTargetAreRefused() {
        Kosa.Result ip = exec("curl", "-sS", "--max-time", "60", "-k", "https://1.1.1.1/");
        assertThat(ip.exitCode()).isNotZero();
        Kosa.Result sni = exec("curl", "-sS", "--max-time", "60", "--cacert", "/workspace/api-ca.pem",
                "--connect-to", "api.test:443:other.test:443", "https://api.test/hello");
        assertThat(sni.exitCode()).isNotZero();
        assertThat(netLog()).contains("CONNECT to an IP address is refused",
                "the TLS server name api.test differs from the CONNECT target other.test");
    }

    @Test
    @Order(14)
    void anAllowedNameRebindingToLoopbackAndARedirectToADeniedHostGoNowhere() {
        // intercepted: the refusal is a 403 inside TLS, which --fail turns into curl's failure
        Kosa.Result rebind = exec("curl", "-sS", "--fail", "--max-time", "60", "-k", "https://rebind.test/");
        assertThat(rebind.exitCode()).isNotZero();
        Kosa.Result redirect = exec("curl", "-sS", "--max-time", "60", "-L", "http://api.test/redirect");
        assertThat(redirect.stdout()).as(redirect.toString()).contains("kosa8 allow " + id + " denied.test")
                .doesNotContain("hello from");
        assertThat(netLog()).contains("rebind.test resolves only to addresses the broker refuses");
    }

    @Test
    @Order(15)
    void smugglingAndOversizedHeadersAreRefused() {
        Kosa.Result r = exec("python3", "-c", """
                import socket
                def send(req):
                    s = socket.create_connection(("10.0.2.100", 80), timeout=30)
                    s.sendall(req); data = b""
                    while True:
                        chunk = s.recv(65536)
                        if not chunk: break
                        data += chunk
                    return data.split(b"\\r\\n")[0].decode()
                print(send(b"POST /hello HTTP/1.1\\r\\nHost: api.test\\r\\nContent-Length: 4\\r\\n"
                           b"Transfer-Encoding: chunked\\r\\n\\r\\n0\\r\\n\\r\\nGET /admin HTTP/1.1\\r\\nHost: api.test\\r\\n\\r\\n"))
                print(send(b"GET /hello HTTP/1.1\\r\\nHost: api.test\\r\\nX-Big: " + b"a" * 65536 + b"\\r\\n\\r\\n"))
                """);
        assertThat(r.stdout()).as(r.toString()).contains("HTTP/1.1 400", "HTTP/1.1 431");
        assertThat(netLog()).contains("request smuggling refused");
    }

    @Test
    @Order(16)
    void everyCaVariableNamesABundleHoldingTheSandboxCaAndGitAndPythonFailClearlyOnADeniedHost() {
        // the sandbox CA's first line of base64: every bundle a client is pointed at must hold it
        Kosa.Result vars = sh("""
                marker=$(sed -n 2p /etc/kosa8/ca.pem)
                for v in SSL_CERT_FILE REQUESTS_CA_BUNDLE NODE_EXTRA_CA_CERTS GIT_SSL_CAINFO CURL_CA_BUNDLE; do
                  f=$(printenv $v) && grep -qF "$marker" "$f" && echo "$v holds it"
                done
                echo "NO_PROXY=$NO_PROXY"
                """);
        assertThat(vars.stdout()).as(vars.toString()).contains("SSL_CERT_FILE holds it", "REQUESTS_CA_BUNDLE holds it",
                "NODE_EXTRA_CA_CERTS holds it", "GIT_SSL_CAINFO holds it", "CURL_CA_BUNDLE holds it",
                "NO_PROXY=localhost,127.0.0.1,::1");
        Kosa.Result git = exec("git", "clone", "-q", "https://denied.test/repo.git", "/tmp/denied-repo");
        assertThat(git.exitCode()).as(git.toString()).isNotZero();
        assertThat(git.stderr()).as(git.toString()).contains("403");
        Kosa.Result py = exec("python3", "-c", "import urllib.request; urllib.request.urlopen("
                + "'https://denied.test/hello', timeout=60)");
        assertThat(py.exitCode()).as(py.toString()).isNotZero();
        assertThat(py.stderr()).as(py.toString()).contains("403");
    }

    // --- inside TLS: every allowed host's requests are read (the default), a passthrough host's are not ---

    @Test
    @Order(17)
    void everyClientCompletesRequestsToAnInterceptedHostTrustingTheSandboxCaWithNoOption() {
        Kosa.Result viaProxy = exec("curl", "-sS", "--max-time", "60", "https://front.test/hello");
        assertThat(viaProxy.stdout()).as(viaProxy.toString()).isEqualTo("hello from front.test GET");
        // one connection carries both requests (keep-alive): the second makes no new connection
        Kosa.Result keepAlive = exec("curl", "-sS", "--max-time", "60", "--noproxy", "*", "-w", " %{num_connects}\\n",
                "https://front.test/hello", "https://front.test/hello");
        assertThat(keepAlive.stdout()).as(keepAlive.toString())
                .isEqualTo("hello from front.test GET 1\nhello from front.test GET 0\n");
        for (String proxy : new String[] {"", "*"}) {
            Kosa.Result h2 = exec("curl", "-sS", "--max-time", "60", "--http2", "--noproxy", proxy, "-w",
                    " %{http_version}", "https://front.test/hello");
            assertThat(h2.stdout()).as(h2.toString()).isEqualTo("hello from front.test GET 2");
        }
        Kosa.Result py = exec("python3", "-c", "import urllib.request; print(urllib.request.urlopen("
                + "'https://front.test/hello', timeout=60).read().decode())");
        assertThat(py.stdout()).as(py.toString()).isEqualTo("hello from front.test GET\n");
        Kosa.Result git = sh("rm -rf /tmp/front-repo && git clone -q https://front.test/repo.git /tmp/front-repo "
                + "&& cat /tmp/front-repo/README");
        assertThat(git.stdout()).as(git.toString()).isEqualTo("cloned through the broker\n");
        // a chunked upload, carried on whole
        Kosa.Result upload = sh("head -c 300000 /dev/zero | curl -sS --max-time 60 --http1.1 "
                + "-H 'Transfer-Encoding: chunked' -T - -X POST https://front.test/hello");
        assertThat(upload.stdout()).as(upload.toString()).isEqualTo("hello from front.test POST");
        // the guest sees the sandbox CA's leaf for front.test, and the server's own certificate for a passthrough host
        Kosa.Result issuers = exec("python3", "-c", """
                import socket, ssl
                def issuer(host, cafile=None):
                    ctx = ssl.create_default_context(cafile=cafile)  # with a cafile, that file alone is trusted
                    with ctx.wrap_socket(socket.create_connection((host, 443), timeout=60), server_hostname=host) as s:
                        return dict(x[0] for x in s.getpeercert()["issuer"])["commonName"]
                print("front.test:", issuer("front.test"))
                print("api.test:", issuer("api.test", "/workspace/api-ca.pem"))
                """);
        assertThat(issuers.stdout()).as(issuers.toString()).contains("front.test: kosa8 sandbox ",
                "api.test: kosa8 sandbox test-upstream CA").doesNotContain("front.test: kosa8 sandbox test-upstream");
        // the audit log names each request's method, authority and path, never a header's value
        String log = netLog();
        assertThat(log).contains("\"host\":\"front.test\"", "\"method\":\"POST\",\"path\":\"/hello\"",
                "\"method\":\"GET\",\"path\":\"/repo.git/info/refs\"").doesNotContain("curl/", "Python-urllib");
    }

    @Test
    @Order(18)
    void domainFrontingAndHttp2CoalescingOntoAnotherNameOfTheSameServerGetA421AndNeverReachIt() {
        int before = front.seen.size();
        for (String proxy : new String[] {"", "*"}) {
            Kosa.Result fronted = exec("curl", "-sS", "--max-time", "60", "--noproxy", proxy, "-w", " %{http_code}",
                    "-H", "Host: hidden.test", "https://front.test/hello");
            assertThat(fronted.stdout()).as(fronted.toString())
                    .contains("differs from the TLS server name front.test").endsWith(" 421")
                    .doesNotContain("hello from");
        }
        Kosa.Result h2 = exec("curl", "-sS", "--max-time", "60", "--http2", "-w", " %{http_code} %{http_version}",
                "-H", "Host: hidden.test", "https://front.test/hello");
        assertThat(h2.stdout()).as(h2.toString()).endsWith(" 421 2").doesNotContain("hello from");
        // a raw client: the right name first, then another on the same kept-alive connection
        Kosa.Result second = exec("python3", "-c", """
                import socket, ssl
                s = ssl.create_default_context().wrap_socket(socket.create_connection(("front.test", 443), timeout=60),
                                                             server_hostname="front.test")
                buf = b""
                def response():
                    global buf
                    while b"\\r\\n\\r\\n" not in buf:
                        buf += s.recv(65536)
                    head, buf = buf.split(b"\\r\\n\\r\\n", 1)
                    n = [int(l.split(b":")[1]) for l in head.split(b"\\r\\n") if l.lower().startswith(b"content-length:")][0]
                    while len(buf) < n:
                        buf += s.recv(65536)
                    body, buf = buf[:n], buf[n:]
                    print(head.split(b"\\r\\n")[0].decode(), "|", body.decode())
                for host in ["front.test", "hidden.test"]:
                    s.sendall(b"GET /hello HTTP/1.1\\r\\nHost: " + host.encode() + b"\\r\\n\\r\\n")
                    response()
                """);
        assertThat(second.stdout()).as(second.toString()).contains("HTTP/1.1 200 OK | hello from front.test GET",
                "HTTP/1.1 421 Misdirected Request | ").doesNotContain("hello from hidden.test");
        // HTTP/2 connection coalescing: one connection, a stream for front.test and one for hidden.test, which the
        // same server also serves (frames and HPACK by hand; literal fields, no Huffman)
        Kosa.Result coalesced = exec("python3", "-c", """
                import socket, ssl, struct
                ctx = ssl.create_default_context(); ctx.set_alpn_protocols(["h2"])
                s = ctx.wrap_socket(socket.create_connection(("front.test", 443), timeout=60), server_hostname="front.test")
                print("alpn", s.selected_alpn_protocol())
                def lit(n, v): return b"\\x00" + bytes([len(n)]) + n.encode() + bytes([len(v)]) + v.encode()
                def frame(t, f, sid, p): return struct.pack(">I", len(p))[1:] + bytes([t, f]) + struct.pack(">I", sid) + p
                def get(sid, authority):
                    return frame(1, 5, sid, lit(":method", "GET") + lit(":scheme", "https") + lit(":path", "/hello")
                                 + lit(":authority", authority))
                s.sendall(b"PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n" + frame(4, 0, 0, b"") + get(1, "front.test")
                          + get(3, "hidden.test"))
                buf, bodies, status, done = b"", {1: b"", 3: b""}, {}, set()
                while len(done) < 2:
                    while len(buf) < 9 or len(buf) < 9 + int.from_bytes(buf[:3], "big"):
                        d = s.recv(65536)
                        if not d: raise SystemExit("closed early: %r" % bodies)
                        buf += d
                    n, t, f = int.from_bytes(buf[:3], "big"), buf[3], buf[4]
                    sid, p, buf = int.from_bytes(buf[5:9], "big") & 0x7fffffff, buf[9:9 + n], buf[9 + n:]
                    if t == 4 and not f & 1: s.sendall(frame(4, 1, 0, b""))
                    if t == 1: status[sid] = "200" if p[:1] == b"\\x88" else "not 200"  # :status 200 is static entry 8
                    if t == 0: bodies[sid] += p
                    if t in (0, 1) and f & 1: done.add(sid)
                    if t == 3: done.add(sid); status[sid] = "reset"
                    if t == 7: raise SystemExit("goaway: %r" % bodies)
                for sid in (1, 3): print("stream", sid, status.get(sid), "|", bodies[sid].decode(errors="replace"))
                """);
        assertThat(coalesced.stdout()).as(coalesced.toString()).contains("alpn h2",
                "stream 1 200 | hello from front.test GET", "stream 3 not 200 | ",
                "the :authority 'hidden.test' differs from the TLS server name front.test")
                .doesNotContain("hello from hidden.test");
        // the server behind both names got the right name's requests and never one for the other
        assertThat(front.seen.subList(before, front.seen.size())).as("what the upstream got")
                .anyMatch(r -> r.startsWith("GET /hello"))
                .noneMatch(r -> r.toLowerCase(java.util.Locale.ROOT).contains("hidden.test"));
        assertThat(netLog()).contains("\"host\":\"front.test\"", "\"decision\":\"deny\"",
                "differs from the TLS server name front.test");
    }

    @Test
    @Order(19)
    void aPassthroughHostRefusesEncryptedClientHelloAndASecondClientHello() {
        // real ClientHellos from the guest's own TLS library, one given the ECH extension, one followed by another
        Kosa.Result r = exec("python3", "-c", """
                import socket, ssl
                def hello(name):
                    i, o = ssl.MemoryBIO(), ssl.MemoryBIO()
                    tls = ssl.create_default_context().wrap_bio(i, o, server_hostname=name)
                    try:
                        tls.do_handshake()
                    except ssl.SSLWantReadError:
                        pass
                    return o.read()
                def with_ech(record):
                    body = bytearray(record[9:])
                    pos = 2 + 32; pos += 1 + body[pos]; pos += 2 + int.from_bytes(body[pos:pos + 2], "big")
                    pos += 1 + body[pos]
                    ech = bytes.fromhex("fe0d") + (5).to_bytes(2, "big") + bytes.fromhex("0000010001")
                    body[pos:pos + 2] = (int.from_bytes(body[pos:pos + 2], "big") + len(ech)).to_bytes(2, "big")
                    body += ech
                    hs = b"\\x01" + len(body).to_bytes(3, "big") + bytes(body)
                    return record[:3] + len(hs).to_bytes(2, "big") + hs
                def send(data, whole=True):
                    s = socket.create_connection(("10.0.2.100", 443), timeout=30); s.sendall(data); got = b""
                    try:
                        while True:
                            c = s.recv(4096)
                            if not c: break
                            got += c
                            if not whole: break
                    except OSError:
                        pass
                    return got[:7].hex()
                print("plain", send(hello("api.test"), whole=False)[:2])
                print("ech", send(with_ech(hello("api.test"))))
                print("second", send(hello("api.test") + hello("other.test")))
                print("again", send(hello("api.test") + hello("api.test")))
                """);
        // 16: the server's handshake; 15 03 03 00 02 02 31: a fatal access_denied alert, and nothing before it
        assertThat(r.stdout()).as(r.toString()).contains("plain 16", "ech 15030300020231",
                "second 15030300020231", "again 15030300020231");
        assertThat(netLog()).contains("carries Encrypted Client Hello",
                "on a connection passed through for api.test",
                "a second ClientHello that the server did not ask for");
    }

    @Test
    @Order(20)
    void removingResolvConfAndProxyVariablesOpensNothing() {
        Kosa.Result r = sh("""
                cp /etc/resolv.conf /tmp/resolv.conf.saved
                cp /etc/kosa8/exec.env /tmp/exec.env.saved
                rm -f /etc/resolv.conf /etc/kosa8/exec.env
                unset HTTP_PROXY HTTPS_PROXY http_proxy https_proxy
                curl -sS --max-time 20 --resolve denied.test:443:1.1.1.1 -k https://denied.test/ && echo OPEN-1
                curl -sS --max-time 20 --resolve denied.test:443:10.0.2.100 -k https://denied.test/ && echo OPEN-2
                curl -sS --max-time 20 --resolve denied.test:80:10.0.2.2 http://denied.test:%d/hello && echo OPEN-3
                cp /tmp/resolv.conf.saved /etc/resolv.conf
                cp /tmp/exec.env.saved /etc/kosa8/exec.env
                echo done
                """.formatted(api.httpPort()));
        assertThat(r.stdout()).as(r.toString()).contains("done").doesNotContain("OPEN-");
    }

    @Test
    @Order(21)
    void aGuestThatChangesItsAddressAndRoutesOrFlushesAFirewallStillReachesNothing() {
        // there are no guest firewall rules to delete, and no network device to send on: the guest's only way out is
        // the agent's port to the broker. The guest's root (the image has no `ip`: the kernel's ioctls, as ifconfig
        // and route use them) takes another address on the one interface there is, routes 1.1.1.1 and then
        // everything through it, and dials out from that address and from the broker's.
        String script = """
                import ctypes, os, shutil, socket, struct, fcntl
                print("firewall tools:", [t for t in ("iptables", "nft") if shutil.which(t)])
                print("interfaces:", sorted(os.listdir("/sys/class/net")))
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                def sa(ip): return struct.pack("=H2s4s8x", socket.AF_INET, bytes(2), socket.inet_aton(ip))
                def ifreq(data): return struct.pack("16s", b"lo:1") + data
                lo = ctypes.create_string_buffer(b"lo")
                def rt(dst, mask, flags):
                    return struct.pack("=Q16s16s16sHh4xQQh6xQQQH6x", 0, sa(dst), sa("0.0.0.0"), sa(mask), flags,
                                       0, 0, 0, 0, ctypes.addressof(lo), 0, 0, 0)
                UP, HOST = 1, 4
                fcntl.ioctl(s, 0x8916, ifreq(sa("10.0.2.99")))           # SIOCSIFADDR
                fcntl.ioctl(s, 0x891c, ifreq(sa("255.255.255.0")))       # SIOCSIFNETMASK
                flags = struct.unpack("16sH", fcntl.ioctl(s, 0x8913, ifreq(bytes(24)))[:18])[1]
                fcntl.ioctl(s, 0x8914, ifreq(struct.pack("H22x", flags | UP)))
                print("address taken")
                fcntl.ioctl(s, 0x890B, rt("1.1.1.1", "255.255.255.255", UP | HOST))
                print("host route added")
                fcntl.ioctl(s, 0x890B, rt("0.0.0.0", "0.0.0.0", UP))
                print("default route added")
                try:
                    for src in ["10.0.2.100", "10.0.2.99"]:
                        for host, port in [("1.1.1.1", 443), ("10.0.2.2", %d), ("10.0.2.2", 22), ("8.8.8.8", 53)]:
                            c = socket.socket(); c.settimeout(5)
                            try:
                                c.bind((src, 0)); c.connect((host, port)); print("CONNECTED", src, host, port)
                            except OSError as e:
                                print("refused", src, host, port, e)
                            finally:
                                c.close()
                finally:
                    fcntl.ioctl(s, 0x890C, rt("1.1.1.1", "255.255.255.255", UP | HOST))
                    fcntl.ioctl(s, 0x890C, rt("0.0.0.0", "0.0.0.0", UP))
                    fcntl.ioctl(s, 0x8914, ifreq(struct.pack("H22x", flags & ~UP)))
                    print("restored")
                """.formatted(api.httpPort());
        Kosa.Result r = exec("python3", "-c", script);
        assertThat(r.stdout()).as(r.toString()).contains("firewall tools: []", "interfaces: ['lo']", "address taken",
                        "host route added", "default route added", "refused 10.0.2.99 1.1.1.1",
                        "refused 10.0.2.100 1.1.1.1", "restored")
                .doesNotContain("CONNECTED", "Cannot assign requested address");
        // the sandbox's own way out still works afterwards, and only that way
        Kosa.Result after = exec("curl", "-sS", "--max-time", "60", "--cacert", "/workspace/api-ca.pem",
                "https://api.test/hello");
        assertThat(after.stdout()).as(after.toString()).isEqualTo("hello from api.test GET");
    }

    @Test
    @Order(22)
    void aWebSocketServerSentEventsAndA100MegabyteDownloadGoThroughInterception() throws Exception {
        Kosa.Result socket = exec("python3", "-c", """
                import socket, ssl, os, base64
                s = ssl.create_default_context().wrap_socket(socket.create_connection(("ws.test", 443), timeout=60),
                                                             server_hostname="ws.test")
                key = base64.b64encode(os.urandom(16)).decode()
                s.sendall(("GET /chat HTTP/1.1\\r\\nHost: ws.test\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n"
                           "Sec-WebSocket-Key: " + key + "\\r\\nSec-WebSocket-Version: 13\\r\\n\\r\\n").encode())
                head = b""
                while b"\\r\\n\\r\\n" not in head:
                    head += s.recv(1)
                print(head.split(b"\\r\\n")[0].decode())
                msg, mask = b"echo through the broker", os.urandom(4)
                s.sendall(bytes([0x81, 0x80 | len(msg)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(msg)))
                back = b""
                while len(back) < 6 + len(msg):
                    back += s.recv(4096)
                print(bytes(b ^ mask[i % 4] for i, b in enumerate(back[6:])).decode())
                """);
        assertThat(socket.stdout()).as(socket.toString()).isEqualTo(
                "HTTP/1.1 101 Switching Protocols\necho through the broker\n");
        assertThat(ws.heads).anyMatch(h -> h.startsWith("GET /chat HTTP/1.1"));
        // server-sent events: the first event reaches the guest while the response is still open
        exec("sh", "-c", "nohup setsid curl -sSN --max-time 170 https://front.test/stream > /tmp/sse 2>&1 < /dev/null &");
        String events = waitFor("cat /tmp/sse", "data: one");
        assertThat(events).as("before the server sends its second event").doesNotContain("data: two");
        front.streamGate.countDown();
        assertThat(waitFor("cat /tmp/sse", "data: two")).isEqualTo("data: one\n\ndata: two\n\n");
        // a long download, over HTTP/1.1 and (past many flow-control windows) over HTTP/2
        Kosa.Result big = Kosa.run(Duration.ofMinutes(10), "exec", id, "--", "curl", "-sS", "--http1.1", "--max-time",
                "570", "-o", "/dev/null", "-w", "%{size_download} %{http_code} %{http_version}",
                "https://front.test/big?n=100000000");
        assertThat(big.stdout()).as(big.toString()).isEqualTo("100000000 200 1.1");
        Kosa.Result big2 = Kosa.run(Duration.ofMinutes(5), "exec", id, "--", "curl", "-sS", "--http2", "--max-time",
                "270", "-o", "/dev/null", "-w", "%{size_download} %{http_code} %{http_version}",
                "https://front.test/big?n=20000000");
        assertThat(big2.stdout()).as(big2.toString()).isEqualTo("20000000 200 2");
    }

    @Test
    void aFiftyMegabyteUploadGoesThroughInterception() throws Exception {
        // past the 8 MiB the broker holds in memory: kept on disk until judged whole, then sent on (docs/network.md)
        Kosa.Result up = Kosa.run(Duration.ofMinutes(10), "exec", id, "--", "sh", "-c", "head -c 52428800 "
                + "/dev/urandom > /tmp/upload && sha256sum /tmp/upload | cut -d' ' -f1 && curl -sS --max-time 500 "
                + "--data-binary @/tmp/upload https://front.test/sink; rm -f /tmp/upload");
        String[] lines = up.stdout().split("\n");
        assertThat(lines).as(up.toString()).hasSize(2);
        assertThat(lines[1]).as("what front.test received").isEqualTo(lines[0] + " 52428800");
    }

    /** Runs {@code script} in the guest every half second until its output contains {@code expected}, for a minute. */
    String waitFor(String script, String expected) throws InterruptedException {
        String out = "";
        for (long end = System.nanoTime() + Duration.ofMinutes(1).toNanos(); System.nanoTime() < end; ) {
            out = sh(script).stdout();
            if (out.contains(expected)) {
                return out;
            }
            Thread.sleep(500);
        }
        throw new AssertionError("'" + expected + "' never appeared in the output of " + script + ": " + out);
    }
}
