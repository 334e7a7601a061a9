package dev.kosa8.egress;

import dev.kosa8.net.HostName;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.dns.DefaultDnsRawRecord;
import io.netty.handler.codec.dns.DefaultDnsRecordEncoder;
import io.netty.handler.codec.dns.DefaultDnsResponse;
import io.netty.handler.codec.dns.DnsOpCode;
import io.netty.handler.codec.dns.DnsQuery;
import io.netty.handler.codec.dns.DnsRecord;
import io.netty.handler.codec.dns.DnsRecordType;
import io.netty.handler.codec.dns.DnsResponse;
import io.netty.handler.codec.dns.DnsResponseCode;
import io.netty.handler.codec.dns.DnsSection;
import java.time.Instant;

/**
 * The sandbox's DNS: an authority for allowed names only. An allowed name's
 * A record is the broker's own guest-side address (so even a program that
 * ignores proxy settings lands on the broker); other record types of an
 * allowed name are empty; every other name is NXDOMAIN and a log line. It
 * never recurses, so no query the guest makes ever leaves the host. Past the
 * sandbox's rate ({@link QueryRate}) every query is REFUSED.
 */
final class DnsAnswerer extends SimpleChannelInboundHandler<DnsQuery> {
    static final int TTL_SECONDS = 30;
    private static final byte[] BROKER_ADDRESS = {10, 0, 2, 100};
    static final NameCheck NAMES = new NameCheck();

    private final Broker broker;

    DnsAnswerer(Broker broker) {
        this.broker = broker;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, DnsQuery query) {
        DnsResponse res = new DefaultDnsResponse(query.id(), DnsOpCode.QUERY, DnsResponseCode.NOERROR);
        res.setAuthoritativeAnswer(true).setRecursionDesired(query.isRecursionDesired()).setRecursionAvailable(false);
        if (query.opCode() != DnsOpCode.QUERY || query.count(DnsSection.QUESTION) != 1) {
            res.setCode(query.opCode() != DnsOpCode.QUERY ? DnsResponseCode.NOTIMP : DnsResponseCode.FORMERR);
            answer(ctx, res);
            return;
        }
        DnsRecord question = query.recordAt(DnsSection.QUESTION);
        if (!NAMES.writable(question.name())) {
            // Netty reads names it refuses to write back (a NUL in a label, a '.' in one that leaves an empty
            // label): echoed, the answer would fail to encode and the guest would wait until its resolver gave up
            res.setCode(DnsResponseCode.FORMERR);
            answer(ctx, res);
            return;
        }
        res.addRecord(DnsSection.QUESTION, question);
        String name = HostName.normalize(question.name());
        QueryRate rate = broker.dnsRate();
        if (rate != null && !rate.take()) {
            res.setCode(DnsResponseCode.REFUSED);
            if (rate.sayRefusal()) {
                broker.audit().write(new AuditEvent(Instant.now(), Listener.DNS.label(),
                        name != null ? name : shown(question.name()), null, null, null, null, "deny",
                        "more than " + QueryRate.PER_SECOND + " DNS queries a second: REFUSED (said at most once a "
                                + "second)", null, null, null));
            }
            answer(ctx, res);
            return;
        }
        EgressPolicy policy = broker.policy();
        if (name == null || !policy.answers(name)) {
            res.setCode(DnsResponseCode.NXDOMAIN);
            broker.audit().write(new AuditEvent(Instant.now(), Listener.DNS.label(),
                    name != null ? name : shown(question.name()), null,
                    null, null, null, "deny", "not on the allow-list: NXDOMAIN", null, null, null));
        } else if (question.type() == DnsRecordType.A) {
            res.addRecord(DnsSection.ANSWER, new DefaultDnsRawRecord(question.name(), DnsRecordType.A, TTL_SECONDS,
                    Unpooled.wrappedBuffer(BROKER_ADDRESS)));
        }
        answer(ctx, res);
    }

    /** An answer that cannot be sent ends the connection, so the guest's resolver does not wait on it. */
    private static void answer(ChannelHandlerContext ctx, DnsResponse res) {
        ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    }

    /**
     * A guest that sends queries without reading the answers is not read from until it does, so the
     * answers wait in the socket's buffers instead of piling up in the daemon's memory.
     */
    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        ctx.channel().config().setAutoRead(ctx.channel().isWritable());
        ctx.fireChannelWritabilityChanged();
    }

    /** A name as the log shows it: bounded, since a guest chooses it. */
    private static String shown(String raw) {
        return raw.length() > HostName.MAX_LENGTH + 1 ? raw.substring(0, HostName.MAX_LENGTH) + "..." : raw;
    }

    /**
     * Netty's own rules for a name it writes: labels of 1 to 63 octets without NUL, 255 octets in all (narrower
     * than what its decoder reads). BrokerFuzzTest models the answers with the same check.
     */
    static final class NameCheck extends DefaultDnsRecordEncoder {
        boolean writable(String name) {
            ByteBuf scratch = Unpooled.buffer(256);
            try {
                encodeName(name, scratch);
                return true;
            } catch (Exception e) {
                return false;
            } finally {
                scratch.release();
            }
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close(); // a malformed query: no answer, nothing else
    }
}
