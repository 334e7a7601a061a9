package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Published ports with real guests: a server in the sandbox answers real clients on the host's loopback, over
 * kosa8's own channel, while the guest still reaches nothing outward; two sandboxes publishing one guest port get
 * two host ports; a host port in use is a clear error; a port comes back after stop/start and a rewind.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PortsIT {
    private static final Duration T = Duration.ofMinutes(3);
    private static final Pattern PUBLISHED = Pattern.compile("publishes 127\\.0\\.0\\.1:(\\d+)->8000");
    static String id;
    static String other;
    static int hostPort;

    @BeforeAll
    static void boot() throws Exception {
        Kosa.Result r = Kosa.ok(Duration.ofMinutes(15), "create", "--workspace", "none", "-p", "8000");
        id = r.stdout().strip();
        Matcher m = PUBLISHED.matcher(r.stderr());
        assertThat(m.find()).as(r.toString()).isTrue();
        hostPort = Integer.parseInt(m.group(1));
        serve(id);
    }

    @AfterAll
    static void remove() {
        for (String s : new String[] {id, other}) {
            if (s != null) {
                Kosa.run(Duration.ofMinutes(1), "rm", "-f", s);
            }
        }
    }

    /** Starts python3's http.server on port 8000 of the guest, serving /srv with one file, and waits for it. */
    static void serve(String sandbox) throws Exception {
        Kosa.ok(T, "exec", sandbox, "--", "sh", "-c", "mkdir -p /srv && echo hello-from-" + sandbox
                + " > /srv/hello.txt && cd /srv && (nohup python3 -m http.server 8000 > /tmp/http.log 2>&1 &)");
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (true) {
            Kosa.Result up = Kosa.run(T, "exec", sandbox, "--", "python3", "-c",
                    "import socket; socket.create_connection(('127.0.0.1', 8000), timeout=5).close()");
            if (up.exitCode() == 0) {
                return;
            }
            assertThat(System.nanoTime()).as("the guest's server listens: " + up).isLessThan(deadline);
            Thread.sleep(500);
        }
    }

    static Kosa.Result curl(int port, String path) {
        try {
            Process p = new ProcessBuilder("curl", "-sS", "--max-time", "60", "http://127.0.0.1:" + port + path)
                    .start();
            byte[] out = p.getInputStream().readAllBytes();
            String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(90, TimeUnit.SECONDS)).isTrue();
            return new Kosa.Result(p.exitValue(), out, err);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    @Order(1)
    void aServerInTheGuestAnswersCurlAndJavasHttpClientOnThePublishedLoopbackPort() throws Exception {
        Kosa.Result c = curl(hostPort, "/hello.txt");
        assertThat(c.exitCode()).as(c.toString()).isZero();
        assertThat(c.stdout()).isEqualTo("hello-from-" + id + "\n");
        try (HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build()) {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + hostPort + "/hello.txt")).timeout(Duration.ofSeconds(60)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("hello-from-" + id + "\n");
        }
        Kosa.Result ls = Kosa.ok(T, "port", "ls", id);
        assertThat(ls.stdout()).contains("127.0.0.1:" + hostPort).contains("8000").contains("listening");
        assertThat(Kosa.ok(T, "ls").stdout()).contains("127.0.0.1:" + hostPort + "->8000");
        assertThat(Kosa.ok(T, "inspect", id).stdout()).contains("127.0.0.1:" + hostPort + "->8000");
    }

    @Test
    @Order(2)
    void theGuestStillReachesNothingOutwardWithAPortPublished() {
        String script = """
                import socket, struct
                for host, port in [("1.1.1.1", 443), ("10.0.2.2", %1$d), ("10.0.2.100", %1$d), ("10.0.2.2", 22),
                                   ("10.0.2.100", 22), ("10.0.2.3", 53)]:
                    try:
                        socket.create_connection((host, port), timeout=5).close()
                        print("CONNECTED", host, port)
                    except OSError as e:
                        print("refused", host, port, e)
                q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + b"\\x03api\\x04test\\x00\\x00\\x01\\x00\\x01"
                for host in ["10.0.2.3", "8.8.8.8", "10.0.2.2"]:
                    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
                    try:
                        s.sendto(q, (host, 53)); s.recvfrom(512); print("UDP-ANSWER", host)
                    except OSError as e:
                        print("udp silent", host, e)
                try:
                    socket.create_connection(("2606:4700:4700::1111", 443), timeout=5); print("IPV6-CONNECTED")
                except OSError as e:
                    print("ipv6 refused", e)
                import os
                print("interfaces:", sorted(os.listdir("/sys/class/net")))
                """.formatted(hostPort);
        Kosa.Result r = Kosa.run(T, "exec", id, "--", "python3", "-c", script);
        assertThat(r.stdout()).as(r.toString()).doesNotContain("CONNECTED", "UDP-ANSWER")
                .contains("refused 1.1.1.1", "refused 10.0.2.2 " + hostPort, "udp silent 10.0.2.3", "ipv6 refused")
                .contains("interfaces: ['lo']");
        Kosa.Result denied = Kosa.run(T, "exec", id, "--", "curl", "-sS", "--max-time", "60", "-o", "/dev/null",
                "-w", "%{http_code}", "https://example.com/");
        assertThat(denied.stdout()).as("closed network: the broker refuses " + denied).isNotEqualTo("200");
    }

    @Test
    @Order(3)
    // the default suite took 30.9 min on 2026-12-05 (goal 30): ~23 s for a second VM; a free host port chosen for a
    // guest port is portAddsAPortOnAFreeHostPortAndPortRmTakesItAway's, ports closed with their sandbox
    // SandboxPortsTest.closingResetsEveryConnectionAndFreesEveryHostPort's: ./run-tests long
    @Tag("long")
    void aSecondSandboxPublishingTheSameGuestPortGetsAnotherHostPortEvenWithNoNetwork() throws Exception {
        Kosa.Result r = Kosa.ok(Duration.ofMinutes(15), "create", "--workspace", "none", "--net", "none", "-p",
                "8000");
        other = r.stdout().strip();
        Matcher m = PUBLISHED.matcher(r.stderr());
        assertThat(m.find()).as(r.toString()).isTrue();
        int second = Integer.parseInt(m.group(1));
        assertThat(second).isNotEqualTo(hostPort);
        serve(other);
        assertThat(curl(second, "/hello.txt").stdout()).isEqualTo("hello-from-" + other + "\n");
        assertThat(curl(hostPort, "/hello.txt").stdout()).isEqualTo("hello-from-" + id + "\n");
        Kosa.ok(T, "rm", "-f", other);
        Kosa.Result gone = curl(second, "/hello.txt");
        assertThat(gone.exitCode()).as("the port closed with its sandbox: " + gone).isNotZero();
        other = null;
    }

    @Test
    @Order(4)
    void aHostPortInUseIsAClearErrorThatSaysWhatToDo() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            Kosa.Result r = Kosa.run(T, "port", id, "9000", Integer.toString(port));
            assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
            assertThat(r.stderr()).contains("host port " + port + " on 127.0.0.1 is already in use by another program")
                    .contains("choose another host port (`kosa8 port " + id + " 9000 HOST_PORT`)");
            String before = Kosa.ok(T, "ls", "-q").stdout();
            Kosa.Result create = Kosa.run(T, "create", "--workspace", "none", "-p", port + ":80");
            assertThat(create.exitCode()).as(create.toString()).isEqualTo(2);
            assertThat(create.stderr()).contains("already in use by another program");
            assertThat(Kosa.ok(T, "ls", "-q").stdout()).as("no sandbox left behind").isEqualTo(before);
        }
    }

    @Test
    @Order(5)
    void portAddsAPortOnAFreeHostPortAndPortRmTakesItAway() {
        Kosa.Result add = Kosa.ok(T, "port", id, "8000");
        String address = add.stdout().strip();
        assertThat(address).matches("127\\.0\\.0\\.1:\\d+");
        int port = Integer.parseInt(address.substring(address.indexOf(':') + 1));
        assertThat(curl(port, "/hello.txt").stdout()).isEqualTo("hello-from-" + id + "\n");
        Kosa.ok(T, "port", "rm", id, Integer.toString(port));
        assertThat(curl(port, "/hello.txt").exitCode()).isNotZero();
        assertThat(curl(hostPort, "/hello.txt").stdout()).as("the other mapping stays").isEqualTo("hello-from-" + id
                + "\n");
        Kosa.Result none = Kosa.run(T, "port", "rm", id, "4242");
        assertThat(none.exitCode()).isEqualTo(2);
        assertThat(none.stderr()).contains("publishes no port 4242").contains("127.0.0.1:" + hostPort + "->8000");
    }

    // the default suite took 31.0 min on a clean clone on 2026-12-07 (goal 30): a port published again on a machine
    // that replaced the old one is covered by the rewind case above; ./run-tests long
    @Tag("long")
    @Test
    @Order(6)
    void thePortComesBackAfterStopAndStartOnTheSameHostPort() {
        Kosa.ok(Duration.ofMinutes(5), "stop", id);
        Kosa.Result stopped = curl(hostPort, "/hello.txt");
        assertThat(stopped.exitCode()).as("a stopped sandbox resets connections: " + stopped).isNotZero();
        assertThat(Kosa.ok(T, "port", "ls", id).stdout()).contains("127.0.0.1:" + hostPort);
        Kosa.ok(Duration.ofMinutes(10), "start", id);
        Kosa.Result back = curl(hostPort, "/hello.txt");
        assertThat(back.stdout()).as(back.toString()).isEqualTo("hello-from-" + id + "\n");
    }

    @Test
    @Order(7)
    void afterARewindThePortAnswersAndAConnectionOpenAcrossItIsReset() throws Exception {
        Kosa.ok(T, "checkpoint", id, "-m", "serving", "--wait");
        try (Socket s = new Socket("127.0.0.1", hostPort)) {
            s.setSoTimeout(120_000);
            // half a request: the guest's server waits for the rest on the connection the rewind ends
            s.getOutputStream().write("GET /hello.txt HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            Thread.sleep(1000);
            Kosa.ok(Duration.ofMinutes(5), "rewind", id);
            InputStream in = s.getInputStream();
            boolean ended;
            try {
                ended = in.read() < 0;
            } catch (SocketException e) {
                ended = e.getMessage().contains("reset");
            }
            assertThat(ended).as("the connection open across the rewind ended").isTrue();
        }
        Kosa.Result after = curl(hostPort, "/hello.txt");
        assertThat(after.stdout()).as(after.toString()).isEqualTo("hello-from-" + id + "\n");
    }
}
