package dev.kosa8.egress;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * What the broker reads in a TLS ClientHello: the server name (SNI), the
 * application protocols offered (ALPN) and whether it carries Encrypted
 * Client Hello. A decoder of the guest's bytes, so every length is checked
 * against what is there; anything that does not parse is {@code null}, which
 * the broker refuses.
 *
 * @param serverName the host_name of the server_name extension as sent (not normalized), or null
 * @param alpn       the protocols offered, in the client's order; empty without the extension
 * @param ech        the hello carries the encrypted_client_hello extension (a real one or GREASE: the two
 *                   cannot be told apart, by design), so its real server name may be hidden inside
 */
record ClientHello(String serverName, List<String> alpn, boolean ech) {
    static final int SERVER_NAME = 0;
    static final int ALPN = 16;
    /** encrypted_client_hello (draft-ietf-tls-esni); 0xfd00, ech_outer_extensions, appears only inside it. */
    static final int ENCRYPTED_CLIENT_HELLO = 0xfe0d;
    /** A handshake message's type: ClientHello. */
    static final int TYPE = 1;

    ClientHello {
        alpn = List.copyOf(alpn);
    }

    /**
     * Parses a ClientHello's body: from its legacy_version to the end of its extensions, without the 4-byte
     * handshake header. Reads {@code body} without moving its indexes.
     */
    static ClientHello parse(ByteBuf body) {
        Reader r = new Reader(body, body.readerIndex(), body.writerIndex());
        if (!r.skip(2 + 32) || !r.skipVector(1) || !r.skipVector(2) || !r.skipVector(1)) {
            return null;
        }
        if (r.remaining() == 0) {
            return new ClientHello(null, List.of(), false); // no extensions at all (TLS 1.2 allows it)
        }
        Reader ext = r.vector(2);
        if (ext == null || r.remaining() != 0) {
            return null;
        }
        String name = null;
        List<String> alpn = new ArrayList<>();
        boolean ech = false;
        List<Integer> seen = new ArrayList<>();
        while (ext.remaining() > 0) {
            int type = ext.u16();
            Reader data = ext.vector(2);
            if (type < 0 || data == null || seen.contains(type)) {
                return null; // RFC 8446 4.2: no extension type twice
            }
            seen.add(type);
            switch (type) {
                case SERVER_NAME -> {
                    Reader list = data.vector(2);
                    if (list == null || data.remaining() != 0) {
                        return null;
                    }
                    while (list.remaining() > 0) {
                        int kind = list.u8();
                        Reader host = list.vector(2);
                        if (kind < 0 || host == null) {
                            return null;
                        }
                        if (kind == 0) {
                            if (name != null) {
                                return null; // RFC 6066: one name of each type
                            }
                            name = host.ascii();
                            if (name == null) {
                                return null;
                            }
                        }
                    }
                }
                case ALPN -> {
                    Reader list = data.vector(2);
                    if (list == null || data.remaining() != 0) {
                        return null;
                    }
                    while (list.remaining() > 0) {
                        Reader p = list.vector(1);
                        String protocol = p == null ? null : p.ascii();
                        if (protocol == null || protocol.isEmpty()) {
                            return null;
                        }
                        alpn.add(protocol);
                    }
                }
                case ENCRYPTED_CLIENT_HELLO -> ech = true;
                default -> {
                    // judged by the TLS stack that ends the connection, not here
                }
            }
        }
        return new ClientHello(name, alpn, ech);
    }

    /** Bounds-checked reads over {@code [pos, end)} of a buffer; every method answers -1 or null past the end. */
    private static final class Reader {
        private final ByteBuf buf;
        private int pos;
        private final int end;

        Reader(ByteBuf buf, int pos, int end) {
            this.buf = buf;
            this.pos = pos;
            this.end = end;
        }

        int remaining() {
            return end - pos;
        }

        boolean skip(int n) {
            if (n > remaining()) {
                return false;
            }
            pos += n;
            return true;
        }

        int u8() {
            return remaining() < 1 ? -1 : buf.getUnsignedByte(pos++);
        }

        int u16() {
            if (remaining() < 2) {
                return -1;
            }
            int v = buf.getUnsignedShort(pos);
            pos += 2;
            return v;
        }

        /** The vector whose length takes {@code lengthBytes} bytes, or null when it runs past the end. */
        Reader vector(int lengthBytes) {
            int n = lengthBytes == 1 ? u8() : u16();
            if (n < 0 || n > remaining()) {
                return null;
            }
            Reader v = new Reader(buf, pos, pos + n);
            pos += n;
            return v;
        }

        boolean skipVector(int lengthBytes) {
            return vector(lengthBytes) != null;
        }

        /** The rest as printable ASCII, or null when any byte is not. */
        String ascii() {
            byte[] b = new byte[remaining()];
            buf.getBytes(pos, b);
            pos = end;
            for (byte c : b) {
                if (c < 0x21 || c > 0x7e) {
                    return null;
                }
            }
            return new String(b, StandardCharsets.US_ASCII);
        }
    }
}
