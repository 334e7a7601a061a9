package dev.kosa8.egress;

import dev.kosa8.egress.tls.SandboxCa;
import dev.kosa8.egress.tls.UpstreamTls;
import dev.kosa8.host.KosaException;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The daemon's side of the closed network: starts each sandbox's
 * {@link Broker} on event loops all brokers share, where its network link
 * ({@link GuestLink}) runs too. The test settings, if any, come from the
 * daemon's environment ({@link EgressTestSettings}) and nowhere else.
 */
public final class EgressService implements AutoCloseable {
    /** The broker's event loops: relaying is cheap; two threads keep one slow handshake from stalling the rest. */
    private static final int THREADS = 2;

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(THREADS,
            dev.kosa8.host.NettyTransport.CURRENT.ioHandler());
    private final java.util.function.Supplier<EgressTestSettings> test;
    private final NetPresets presets;
    private final java.util.function.Supplier<NetworkSettings> settings;
    private final Consumer<String> log;

    /**
     * @param test     read again for each broker started, so a test can name the ports of servers it just started
     * @param settings the user's network settings, read again whenever they are needed, so an edit reaches the next
     *                 broker and policy change
     */
    public EgressService(java.util.function.Supplier<EgressTestSettings> test, NetPresets presets,
                         java.util.function.Supplier<NetworkSettings> settings, Consumer<String> log) {
        this.test = test;
        this.presets = presets;
        this.settings = settings;
        this.log = log;
    }

    public NetPresets presets() {
        return presets;
    }

    /** The user's network settings as they are now. */
    public NetworkSettings settings() {
        return settings.get();
    }

    /** The policy a sandbox's broker applies: its mode and allow-list, with the user's address exceptions. */
    public EgressPolicy policy(SandboxNetwork network) {
        return network.policy().withExceptions(settings().exceptions());
    }

    /**
     * Refuses a new sandbox whose folder holds what test settings or the user's network settings are read from:
     * before anything of it is made. Any sandbox's guest could write them, running or not (a failed one may
     * start again), so one such sandbox would stop every broker from starting ({@link #start}).
     */
    public void refuseInNewWorkspace(Path folder) {
        test.get().refuseInNew(folder);
        settings().refuseInNew(folder);
    }

    /**
     * Starts a sandbox's broker: sockets in {@code runtimeDir}, audit log
     * {@code net.log} and CA files ({@code ca/}) in {@code sandboxDir}. Refused while test settings, or the user's
     * network settings, are read from inside any of {@code workspaces} (sandbox id to its workspace folder: every
     * sandbox's, running or not, since any guest may write its own). A sandbox that trusts the host's CAs has a
     * broker that trusts them too when it verifies an upstream.
     */
    public Broker start(String sandboxId, Path runtimeDir, Path sandboxDir, SandboxNetwork network,
                        Map<String, Path> workspaces) {
        EgressTestSettings t = test.get();
        NetworkSettings user = settings();
        workspaces.forEach((id, folder) -> {
            t.refuseInside(folder, id);
            user.refuseInside(folder, id);
        });
        EgressPolicy policy = network.policy().withExceptions(user.exceptions());
        dev.kosa8.egress.tls.HostCas hostCas = network.trustHostCas() ? user.hostCas()
                : dev.kosa8.egress.tls.HostCas.NONE;
        AuditLog audit = new AuditLog(sandboxDir.resolve("net.log"), m -> log.accept("sandbox " + sandboxId + ": " + m));
        if (t.enabled()) {
            log.accept("warning: sandbox " + sandboxId + ": egress TEST settings are on ("
                    + EgressTestSettings.ENVIRONMENT + "): named test hosts reach loopback servers"
                    + t.trustedCa().map(ca -> " and upstream TLS also trusts " + ca).orElse(""));
        }
        Broker b = Broker.start(sandboxId, runtimeDir.resolve("net"), policy, audit, Upstreams.system(t),
                certificateAuthority(sandboxDir, sandboxId), UpstreamTls.clientContext(t.trustedCa(), hostCas), group);
        b.upstreamHttp2(UpstreamTls.http2ClientContext(t.trustedCa(), hostCas));
        b.limitDns(new QueryRate());
        b.spoolIn(sandboxDir.resolve("bodies"));
        return b;
    }

    /**
     * Joins a template's machine to a {@link NetRehearsal} (sockets in {@code runtimeDir}), on the event loops the
     * sandboxes' links run on, so the daemon's side of the link warms as the agent's does.
     *
     * @param bytes the body each request to the rehearsal's HTTP listener gets
     */
    public NetRehearsal rehearse(Path runtimeDir, long bytes, Path netSocket, Path netWindow) {
        return NetRehearsal.start(runtimeDir, bytes, netSocket, netWindow, group, log);
    }

    /** The sandbox's CA (made on first use), whose certificate the guest trusts and whose key stays here. */
    public static SandboxCa certificateAuthority(Path sandboxDir, String sandboxId) {
        return SandboxCa.loadOrCreate(sandboxDir.resolve("ca"), sandboxId);
    }

    /**
     * The kernel command-line word that hands the guest the CA certificate
     * (public; the key never leaves the host): its DER in base64. The guest's
     * init installs it in the system bundle before any program runs.
     */
    public static String kernelArgument(SandboxCa ca) {
        try {
            return "kosa8.ca=" + java.util.Base64.getEncoder().encodeToString(ca.certificate().getEncoded());
        } catch (java.security.cert.CertificateEncodingException e) {
            throw new IllegalStateException("cannot encode the sandbox CA's certificate", e);
        }
    }

    @Override
    public void close() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(3000);
    }
}
