package dev.kosa8.egress;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** TLS ClientHello records built by hand, for tests that need one a real client would not send. */
final class Hellos {
    private Hellos() {
    }

    /** One record holding a ClientHello for {@code name} (null: no server_name), offering {@code alpn}. */
    static byte[] record(String name, List<String> alpn, boolean ech) {
        byte[] hs = handshake(name, alpn, ech);
        return concat(new byte[] {0x16, 3, 1, (byte) (hs.length >> 8), (byte) hs.length}, hs);
    }

    /** The handshake message: type 1, a 3-byte length, the body. */
    static byte[] handshake(String name, List<String> alpn, boolean ech) {
        byte[] body = body(name, alpn, ech);
        return concat(new byte[] {1, (byte) (body.length >> 16), (byte) (body.length >> 8), (byte) body.length}, body);
    }

    /** A ClientHello's body, from legacy_version on: what {@link ClientHello#parse} reads. */
    static byte[] body(String name, List<String> alpn, boolean ech) {
        ByteArrayOutputStream ext = new ByteArrayOutputStream();
        if (name != null) {
            byte[] host = name.getBytes(StandardCharsets.ISO_8859_1);
            ext.writeBytes(u16(0));
            ext.writeBytes(u16(host.length + 5));
            ext.writeBytes(u16(host.length + 3));
            ext.write(0);
            ext.writeBytes(u16(host.length));
            ext.writeBytes(host);
        }
        if (!alpn.isEmpty()) {
            ByteArrayOutputStream list = new ByteArrayOutputStream();
            for (String p : alpn) {
                list.write(p.length());
                list.writeBytes(p.getBytes(StandardCharsets.US_ASCII));
            }
            ext.writeBytes(u16(16));
            ext.writeBytes(u16(list.size() + 2));
            ext.writeBytes(u16(list.size()));
            ext.writeBytes(list.toByteArray());
        }
        ext.writeBytes(new byte[] {0x00, 0x2b, 0x00, 0x03, 0x02, 0x03, 0x04}); // supported_versions: TLS 1.3
        if (ech) {
            // outer ECH: type 0 (outer), a cipher suite, a config id, an encapsulated key and a payload
            byte[] payload = {0, 0, 1, 0, 1, 7, 0, 2, 9, 9, 0, 4, 1, 2, 3, 4};
            ext.writeBytes(u16(ClientHello.ENCRYPTED_CLIENT_HELLO));
            ext.writeBytes(u16(payload.length));
            ext.writeBytes(payload);
        }
        byte[] e = ext.toByteArray();
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(new byte[] {3, 3});
        b.writeBytes(new byte[32]); // random
        b.writeBytes(new byte[] {0, 0, 4, 0x13, 0x01, 0x13, 0x02, 1, 0});
        b.writeBytes(u16(e.length));
        b.writeBytes(e);
        return b.toByteArray();
    }

    static byte[] u16(int v) {
        return new byte[] {(byte) (v >> 8), (byte) v};
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            b.writeBytes(p);
        }
        return b.toByteArray();
    }
}
