package dev.kosa8.egress;

import dev.kosa8.egress.tls.HostCas;
import dev.kosa8.egress.tls.SandboxCa;
import dev.kosa8.egress.tls.UpstreamTls;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A broker that ends TLS for the hosts its policy reads, started as the daemon starts one (EgressService): a sandbox
 * CA of its own in {@code dir}, whose certificate a client is given ({@link #caPem}); the upstreams' TLS verified
 * against the test's trusted CA; HTTP/2 offered upstream to an HTTP/2 guest; and its TLS listener reachable on a
 * loopback port ({@link #tls}). What differs between the tests (upstreams, policy, secrets, other listeners) stays
 * theirs.
 *
 * @param broker the broker, its audit log in {@code dir/net.log}
 * @param ca     the sandbox's CA, which signs the certificates the broker shows the guest
 * @param caPem  that CA's certificate, for a client to trust
 * @param tls    a loopback port to the broker's TLS listener
 */
record InterceptingBroker(Broker broker, SandboxCa ca, Path caPem, UnixBridge tls) implements AutoCloseable {

    /**
     * @param auditFailures told when the audit log cannot be written (a test that asserts none passes its
     *                      problems)
     */
    static InterceptingBroker start(String sandboxId, Path dir, EgressPolicy policy, EgressTestSettings test,
                                    Consumer<String> auditFailures, EventLoopGroup group) throws Exception {
        SandboxCa ca = SandboxCa.loadOrCreate(dir.resolve("sandbox-ca"), sandboxId);
        Path caPem = Files.writeString(dir.resolve("sandbox-ca.pem"), ca.certificatePem());
        Broker broker = Broker.start(sandboxId, dir.resolve("run"), policy,
                new AuditLog(dir.resolve("net.log"), auditFailures), Upstreams.system(test), ca,
                UpstreamTls.clientContext(test.trustedCa()), group);
        // as the daemon does (EgressService): an HTTP/2 guest's upstream is offered h2
        broker.upstreamHttp2(UpstreamTls.http2ClientContext(test.trustedCa(), HostCas.NONE));
        return new InterceptingBroker(broker, ca, caPem, new UnixBridge(broker.sockets().get(Listener.TLS)));
    }

    /** Real curl, for up to 120 s, trusting the sandbox's CA, with {@code host}:443 reaching the TLS listener. */
    BrokerTest.Run curl(String host, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("curl", "-sS", "--max-time", "120", "--noproxy", "",
                "--cacert", caPem.toString(), "--connect-to", host + ":443:127.0.0.1:" + tls.port()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        return new BrokerTest.Run(p.waitFor(), out, err);
    }

    @Override
    public void close() throws IOException {
        tls.close();
        broker.close();
    }
}
