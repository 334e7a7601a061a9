package dev.kosa8.egress.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.concurrent.Future;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class UpstreamTlsTest {
    static final String HOST = "upstream.example.test";
    static EventLoopGroup clients;

    @TempDir
    Path tmp;

    @BeforeAll
    static void startClients() {
        clients = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    }

    @AfterAll
    static void stopClients() {
        clients.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** How a handshake ended: the cause when it failed, the ALPN choice when it did not. */
    record Outcome(Throwable failure, String applicationProtocol) {
        boolean succeeded() {
            return failure == null;
        }
    }

    @Test
    void boringSslIsUsedWhereItIsBundled() {
        boolean bundled = System.getProperty("os.name").equals("Linux") && System.getProperty("os.arch").equals("amd64")
                || System.getProperty("os.name").startsWith("Mac") && System.getProperty("os.arch").equals("aarch64");
        assertThat(TlsSettings.PROVIDER)
                .as("the broker's TLS provider; OpenSsl says: %s", OpenSsl.unavailabilityCause())
                .isEqualTo(bundled ? SslProvider.OPENSSL : SslProvider.JDK);
    }

    @ParameterizedTest
    @EnumSource(value = SslProvider.class, names = {"JDK", "OPENSSL"})
    void aServerNoPublicCaSignedIsRefusedByDefault(SslProvider provider) throws Exception {
        SandboxCa testCa = SandboxCa.loadOrCreate(tmp.resolve("test-ca"), "test-ca");
        try (LoopbackTlsServer server = new LoopbackTlsServer(testCa.serverContextFor(HOST))) {
            Outcome o = handshake(UpstreamTls.clientContext(Optional.empty(), provider), HOST, server.port());

            assertThat(o.succeeded()).isFalse();
            assertThat(o.failure()).hasStackTraceContaining("PKIX path building failed");
        }
    }

    @ParameterizedTest
    @EnumSource(value = SslProvider.class, names = {"JDK", "OPENSSL"})
    void theExtraTestCaIsTrustedForTheRightNameOnly(SslProvider provider) throws Exception {
        Path testCaDir = tmp.resolve("test-ca");
        SandboxCa testCa = SandboxCa.loadOrCreate(testCaDir, "test-ca");
        SslContext client = UpstreamTls.clientContext(Optional.of(testCaDir.resolve("ca.pem")), provider);
        try (LoopbackTlsServer server = new LoopbackTlsServer(testCa.serverContextFor(HOST))) {
            Outcome right = handshake(client, HOST, server.port());
            assertThat(right.failure()).isNull();
            assertThat(right.applicationProtocol()).isEqualTo("http/1.1");

            Outcome wrong = handshake(client, "other.example.test", server.port());
            assertThat(wrong.succeeded()).isFalse();
            assertThat(wrong.failure()).hasStackTraceContaining("No subject alternative DNS name matching other.example.test");
        }
    }

    @ParameterizedTest
    @EnumSource(value = SslProvider.class, names = {"JDK", "OPENSSL"})
    void theExtraTestCaDoesNotMakeOtherCasTrusted(SslProvider provider) throws Exception {
        Path testCaDir = tmp.resolve("test-ca");
        SandboxCa.loadOrCreate(testCaDir, "test-ca");
        SandboxCa stranger = SandboxCa.loadOrCreate(tmp.resolve("stranger"), "stranger");
        SslContext client = UpstreamTls.clientContext(Optional.of(testCaDir.resolve("ca.pem")), provider);
        try (LoopbackTlsServer server = new LoopbackTlsServer(stranger.serverContextFor(HOST))) {
            assertThat(handshake(client, HOST, server.port()).succeeded()).isFalse();
        }
    }

    @Test
    void theHandlerChecksTheHostNameAndSendsItAsSni() {
        SslContext client = UpstreamTls.clientContext(Optional.empty());
        SslHandler h = UpstreamTls.handlerFor(client, ByteBufAllocator.DEFAULT, HOST, 443);
        SSLParameters p = h.engine().getSSLParameters();

        assertThat(p.getEndpointIdentificationAlgorithm()).isEqualTo("HTTPS");
        assertThat(p.getServerNames()).containsExactly(new SNIHostName(HOST));
        // ALPN: the OpenSSL engine keeps it natively, not in SSLParameters; the
        // handshake tests above check that http/1.1 is what gets negotiated.
        // Netty's OpenSSL engine always lists "SSLv2Hello", a hello format, not a
        // protocol version; BoringSSL has no SSLv2 at all.
        assertThat(h.engine().getEnabledProtocols()).filteredOn(p2 -> !p2.equals("SSLv2Hello"))
                .containsExactlyInAnyOrder("TLSv1.3", "TLSv1.2");
        assertThat(h.engine().getPeerHost()).isEqualTo(HOST);
    }

    @Test
    void anUnreadableExtraCaFileIsNamedInTheError() throws Exception {
        Path missing = tmp.resolve("missing.pem");
        assertThatThrownBy(() -> UpstreamTls.clientContext(Optional.of(missing)))
                .isInstanceOf(KosaException.class)
                .hasMessageContaining(missing.toString());
        Path empty = Files.writeString(tmp.resolve("empty.pem"), "");
        assertThatThrownBy(() -> UpstreamTls.clientContext(Optional.of(empty)))
                .isInstanceOf(KosaException.class)
                .hasMessageContaining(empty.toString())
                .hasMessageContaining("no certificate");
    }

    private static Outcome handshake(SslContext client, String host, int port) throws InterruptedException {
        // held from the start: a handshake refused at once closes the channel, and a closed channel's pipeline
        // no longer has its handlers by the time this thread looks for them
        var handler = new java.util.concurrent.atomic.AtomicReference<SslHandler>();
        Channel ch = new Bootstrap()
                .group(clients)
                .channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel c) {
                        SslHandler tls = UpstreamTls.handlerFor(client, c.alloc(), host, port);
                        handler.set(tls);
                        c.pipeline().addLast(tls,
                                new ChannelInboundHandlerAdapter() {
                                    @Override
                                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                        ctx.close(); // the handshake future carries the cause
                                    }
                                });
                    }
                })
                .connect("127.0.0.1", port).sync().channel();
        try {
            SslHandler ssl = handler.get();
            Future<Channel> done = ssl.handshakeFuture();
            assertThat(done.await(10, TimeUnit.SECONDS)).as("handshake finished").isTrue();
            return new Outcome(done.cause(), done.isSuccess() ? ssl.applicationProtocol() : null);
        } finally {
            ch.close().sync();
        }
    }

}
