package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** The ClientHello reader: what it finds, and that no input gets past its bounds. */
class ClientHelloTest {

    @Test
    void readsTheServerNameTheProtocolsOfferedAndEncryptedClientHello() {
        ClientHello h = ClientHello.parse(Unpooled.wrappedBuffer(Hellos.body("Web.Test", List.of("h2", "http/1.1"),
                false)));
        assertThat(h).isEqualTo(new ClientHello("Web.Test", List.of("h2", "http/1.1"), false));
        assertThat(ClientHello.parse(Unpooled.wrappedBuffer(Hellos.body("web.test", List.of(), true))).ech()).isTrue();
        assertThat(ClientHello.parse(Unpooled.wrappedBuffer(Hellos.body(null, List.of(), false))).serverName())
                .isNull();
    }

    @Test
    void aRealClientsHelloIsRead() throws Exception {
        javax.net.ssl.SSLContext ctx = javax.net.ssl.SSLContext.getInstance("TLS");
        ctx.init(null, null, null);
        var engine = ctx.createSSLEngine("real.test", 443);
        engine.setUseClientMode(true);
        var params = engine.getSSLParameters();
        params.setApplicationProtocols(new String[] {"h2", "http/1.1"});
        params.setServerNames(List.of(new javax.net.ssl.SNIHostName("real.test")));
        engine.setSSLParameters(params);
        var out = java.nio.ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
        engine.beginHandshake();
        engine.wrap(java.nio.ByteBuffer.allocate(0), out);
        byte[] record = Arrays.copyOf(out.array(), out.position());
        ClientHello h = ClientHello.parse(Unpooled.wrappedBuffer(record, 9, record.length - 9));
        assertThat(h).isEqualTo(new ClientHello("real.test", List.of("h2", "http/1.1"), false));
    }

    @Test
    void repeatedExtensionsAndNamesDoNotParse() {
        byte[] body = Hellos.body("a.test", List.of(), false);
        // the same extensions twice: server_name and supported_versions
        byte[] ext = Arrays.copyOfRange(body, 2 + 32 + 9 + 2, body.length);
        byte[] twice = Hellos.concat(Arrays.copyOf(body, 2 + 32 + 9), Hellos.u16(ext.length * 2), ext, ext);
        assertThat(ClientHello.parse(Unpooled.wrappedBuffer(twice))).isNull();
    }

    /** Cut anywhere or with any byte changed, a hello parses to a value or to null, never past its end. */
    @Property(tries = 2000)
    void everyCutOrChangedHelloParsesOrIsRefused(@ForAll @IntRange(min = 0, max = 200) int cut,
            @ForAll @IntRange(min = 0, max = 200) int at, @ForAll byte value) {
        byte[] body = Hellos.body("web.test", List.of("h2", "http/1.1"), true);
        byte[] changed = body.clone();
        changed[at % changed.length] = value;
        for (byte[] b : List.of(Arrays.copyOf(body, Math.min(cut, body.length)), changed)) {
            var buf = Unpooled.wrappedBuffer(b);
            ClientHello h = ClientHello.parse(buf);
            assertThat(buf.readerIndex()).isZero();
            if (h != null && h.serverName() != null) {
                assertThat(h.serverName()).matches("[!-~]+");
            }
        }
    }
}
