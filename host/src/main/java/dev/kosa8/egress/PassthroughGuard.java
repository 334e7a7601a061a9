package dev.kosa8.egress;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import java.time.Instant;

/**
 * Watches the plaintext TLS handshake of a passed-through connection, in
 * front of its {@link Relay}: the broker checked the first ClientHello's
 * server name, and must not let a later one name another server. Every
 * ClientHello the guest sends is checked like the first (the same server
 * name, no Encrypted Client Hello); a second is let through only as the
 * answer to the server's HelloRetryRequest (TLS 1.3), and a third never.
 * Records are passed on whole, after their check, so a refused ClientHello
 * never reaches the upstream complete; a refusal is an {@code access_denied}
 * alert to the guest, the upstream closed, and a log line.
 *
 * <p>The server's side is read only as far as its ServerHello (by
 * {@link #serverSide()}, in the upstream's pipeline): whether it asked for a
 * retry, and which version it chose. Once TLS 1.2 is chosen and the guest has
 * sent ChangeCipherSpec, or TLS 1.3's ServerHello (not a retry) is out, the
 * guest's handshake is encrypted and the guard steps aside: what follows is
 * passed on unread, and a server would refuse a plaintext ClientHello then.
 */
final class PassthroughGuard extends ChannelInboundHandlerAdapter {
    static final int CHANGE_CIPHER_SPEC = 20;
    static final int HANDSHAKE = 22;
    /** A handshake message's type: ServerHello (a HelloRetryRequest is one, with a fixed random). */
    static final int SERVER_HELLO = 2;
    /** TLS records carry at most 2^14 bytes of plaintext, plus the ciphertext's growth (RFC 8446 5.2). */
    static final int MAX_RECORD = (1 << 14) + 256;
    /** The handshake bytes held while a message is incomplete; a ClientHello fits well within. */
    static final int MAX_HANDSHAKE = 64 * 1024;
    /** SHA-256 of "HelloRetryRequest": the random of a ServerHello that is a HelloRetryRequest (RFC 8446 4.1.3). */
    private static final byte[] HRR_RANDOM = java.util.HexFormat.of()
            .parseHex("cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c");

    private final Broker broker;
    private final Listener listener;
    private final String host;
    private final int port;
    private final Channel upstream;
    private CompositeByteBuf records;
    private CompositeByteBuf handshake;
    private int clientHellos;
    private boolean retryAsked;
    /** 0 until the server's ServerHello is read, then 0x0303 (TLS 1.2) or 0x0304 (TLS 1.3). */
    private int version;
    private boolean guestChangedCipher;
    private boolean refused;

    PassthroughGuard(Broker broker, Listener listener, String host, int port, Channel upstream) {
        this.broker = broker;
        this.listener = listener;
        this.host = host;
        this.port = port;
        this.upstream = upstream;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        records = ctx.alloc().compositeBuffer();
        handshake = ctx.alloc().compositeBuffer();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        // whatever is held goes on once the guard steps aside; after a refusal (the pipeline torn down as the
        // connection closes) it is the refused record itself, and goes nowhere
        if (records.isReadable() && !refused) {
            ctx.fireChannelRead(records.retain());
        }
        records.release();
        handshake.release();
    }

    /** The handler that reads the server's ServerHello for this guard; it leaves once it has the answer. */
    ChannelInboundHandlerAdapter serverSide() {
        return new ServerHelloWatch();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf in) || refused) {
            ReferenceCountUtil.release(msg);
            return;
        }
        records.addComponent(true, in);
        while (records.readableBytes() >= 5) {
            int type = records.getUnsignedByte(records.readerIndex());
            int length = records.getUnsignedShort(records.readerIndex() + 3);
            if (length > MAX_RECORD) {
                refuse(ctx, "a TLS record of " + length + " bytes, more than TLS allows");
                return;
            }
            if (records.readableBytes() < 5 + length) {
                break;
            }
            String problem = inspect(type, records.slice(records.readerIndex() + 5, length));
            if (problem != null) {
                refuse(ctx, problem);
                return;
            }
            ctx.fireChannelRead(records.readBytes(5 + length)); // a copy: the composite drops what was read
        }
        records.discardReadComponents();
        if (done()) {
            ctx.pipeline().remove(this); // the rest is encrypted: handlerRemoved passes on what is held
        }
    }

    /**
     * The guest sends no plaintext handshake from here on: under TLS 1.3 once the server's ServerHello (not a
     * retry) is out, since the guest's second flight is encrypted; under TLS 1.2 once the guest has sent its
     * ChangeCipherSpec.
     */
    private boolean done() {
        return version == 0x0304 || version == 0x0303 && guestChangedCipher;
    }

    /** Why the record may not pass, or null. */
    private String inspect(int type, ByteBuf payload) {
        if (type == CHANGE_CIPHER_SPEC) {
            guestChangedCipher = true;
            return null;
        }
        if (type != HANDSHAKE || done()) {
            return null;
        }
        handshake.addComponent(true, io.netty.buffer.Unpooled.copiedBuffer(payload));
        if (handshake.readableBytes() > MAX_HANDSHAKE) {
            return "a plaintext TLS handshake message of more than " + MAX_HANDSHAKE + " bytes";
        }
        while (handshake.readableBytes() >= 4) {
            int messageType = handshake.getUnsignedByte(handshake.readerIndex());
            int length = handshake.getUnsignedMedium(handshake.readerIndex() + 1);
            if (length > MAX_HANDSHAKE) {
                return "a plaintext TLS handshake message of more than " + MAX_HANDSHAKE + " bytes";
            }
            if (handshake.readableBytes() < 4 + length) {
                break;
            }
            ByteBuf body = handshake.slice(handshake.readerIndex() + 4, length);
            if (messageType == ClientHello.TYPE) {
                String problem = clientHello(ClientHello.parse(body));
                if (problem != null) {
                    return problem;
                }
            }
            handshake.skipBytes(4 + length);
        }
        handshake.discardReadComponents();
        return null;
    }

    private String clientHello(ClientHello hello) {
        clientHellos++;
        if (hello == null) {
            return "a ClientHello that does not parse";
        }
        if (hello.ech()) {
            return PassthroughGuard.echRefusal(host);
        }
        String name = hello.serverName() == null ? null : dev.kosa8.net.HostName.normalize(hello.serverName());
        if (!host.equals(name)) {
            return "a ClientHello naming '" + (hello.serverName() == null ? "" : hello.serverName())
                    + "' on a connection passed through for " + host;
        }
        if (clientHellos == 2 && !retryAsked) {
            return "a second ClientHello that the server did not ask for (no HelloRetryRequest)";
        }
        if (clientHellos > 2) {
            return "a third ClientHello on one connection";
        }
        return null;
    }

    /** Why a passthrough host's connection is refused when its ClientHello carries ECH. */
    static String echRefusal(String host) {
        return "the ClientHello carries Encrypted Client Hello, which would hide the server name the broker checks "
                + "on a connection passed through unread to " + host + "; turn ECH off in the client, or allow the "
                + "host without passthrough";
    }

    private void refuse(ChannelHandlerContext ctx, String reason) {
        refused = true;
        broker.audit().write(new AuditEvent(Instant.now(), listener.label(), host, port, null, null, null, "deny",
                AuditEvent.redact(reason), null, null, null));
        upstream.close();
        ctx.writeAndFlush(Denials.tlsAccessDenied()).addListener(ChannelFutureListener.CLOSE);
    }

    /** Reads the server's records as far as its ServerHello, on the upstream's channel, passing them all on. */
    private final class ServerHelloWatch extends ChannelInboundHandlerAdapter {
        private CompositeByteBuf seen;

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            seen = ByteBufAllocator.DEFAULT.compositeBuffer();
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            seen.release();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof ByteBuf in) {
                seen.addComponent(true, in.retainedDuplicate());
                if (learned() || seen.readableBytes() > MAX_HANDSHAKE) {
                    ctx.pipeline().remove(this);
                }
            }
            ctx.fireChannelRead(msg);
        }

        /** Reads what the ServerHello says once it is all there; true when nothing more is to be learned. */
        private boolean learned() {
            while (seen.readableBytes() >= 5) {
                int at = seen.readerIndex();
                int type = seen.getUnsignedByte(at);
                int recordLength = seen.getUnsignedShort(at + 3);
                if (type != HANDSHAKE && type != CHANGE_CIPHER_SPEC) {
                    return true; // an alert, or something that is no TLS the guard could use; TLS ends it anyway
                }
                if (seen.readableBytes() < 5 + recordLength) {
                    return false;
                }
                if (type == CHANGE_CIPHER_SPEC) { // TLS 1.3's compatibility mode sends one after a retry request
                    seen.skipBytes(5 + recordLength);
                    continue;
                }
                int length = recordLength >= 4 ? seen.getUnsignedMedium(at + 6) : -1;
                if (seen.getUnsignedByte(at + 5) != SERVER_HELLO || length + 4 > recordLength || length < 2 + 32) {
                    return true; // no whole ServerHello in the first record: nothing the guard could use
                }
                ByteBuf body = seen.slice(at + 9, length);
                byte[] random = new byte[32];
                body.getBytes(2, random);
                int chosen = supportedVersion(body);
                seen.skipBytes(5 + recordLength);
                if (!java.util.Arrays.equals(random, HRR_RANDOM)) {
                    version = chosen;
                    return true;
                }
                retryAsked = true; // the real ServerHello follows the guest's second ClientHello
            }
            seen.discardReadComponents();
            return false;
        }
    }

    /** The version a ServerHello's supported_versions extension chose, else its legacy_version. */
    static int supportedVersion(ByteBuf body) {
        int legacy = body.getUnsignedShort(0);
        int pos = 2 + 32;
        if (body.readableBytes() < pos + 1) {
            return legacy;
        }
        pos += 1 + body.getUnsignedByte(pos); // session id
        pos += 2 + 1; // cipher suite, compression
        if (body.readableBytes() < pos + 2) {
            return legacy;
        }
        int end = Math.min(body.readableBytes(), pos + 2 + body.getUnsignedShort(pos));
        pos += 2;
        while (pos + 4 <= end) {
            int type = body.getUnsignedShort(pos);
            int len = body.getUnsignedShort(pos + 2);
            if (type == 43 && len == 2 && pos + 6 <= end) {
                return body.getUnsignedShort(pos + 4);
            }
            pos += 4 + len;
        }
        return legacy;
    }
}
