package dev.kosa8.egress;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.dns.DefaultDnsRawRecord;
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
 * never recurses, so no query the guest makes ever leaves the host.
 */
final class DnsAnswerer extends SimpleChannelInboundHandler<DnsQuery> {
    static final int TTL_SECONDS = 30;
    private static final byte[] BROKER_ADDRESS = {10, 0, 2, 100};

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
            ctx.writeAndFlush(res);
            return;
        }
        DnsRecord question = query.recordAt(DnsSection.QUESTION);
        res.addRecord(DnsSection.QUESTION, question);
        String name = HostName.normalize(question.name());
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
        ctx.writeAndFlush(res);
    }

    /** A name as the log shows it: bounded, since a guest chooses it. */
    private static String shown(String raw) {
        return raw.length() > HostName.MAX_LENGTH + 1 ? raw.substring(0, HostName.MAX_LENGTH) + "..." : raw;
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close(); // a malformed query: no answer, nothing else
    }
}
