package dev.kosa8.egress;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.net.URI;

/**
 * Judges a request on its head, before its body is gathered: the body of a
 * request the policy refuses is dropped as it arrives, never held, and the
 * refusal goes out at once. Without it a guest with nothing allowed could
 * make the daemon hold a full body ({@link Broker#MAX_BODY}) on every
 * connection it opens. The verdict itself is {@link HttpEntry}'s: a refused
 * head goes on with an empty body, and the entry answers it as usual.
 */
final class HeadGate extends ChannelInboundHandlerAdapter {
    private final Broker broker;
    private final Listener listener;
    private final String tlsHost;
    private final int tlsPort;
    private boolean dropping;

    /** @param tlsHost the server name of an intercepted connection, else null */
    HeadGate(Broker broker, Listener listener, String tlsHost, int tlsPort) {
        this.broker = broker;
        this.listener = listener;
        this.tlsHost = tlsHost;
        this.tlsPort = tlsPort;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest req && !(msg instanceof LastHttpContent)) {
            dropping = req.decoderResult().isSuccess() && req.method() != HttpMethod.CONNECT && refused(req);
            if (dropping) {
                HttpUtil.setContentLength(req, 0);
                req.headers().remove(HttpHeaderNames.TRANSFER_ENCODING).remove(HttpHeaderNames.EXPECT);
                ctx.fireChannelRead(req);
                ctx.fireChannelRead(LastHttpContent.EMPTY_LAST_CONTENT);
                return;
            }
        } else if (dropping && msg instanceof HttpContent) {
            dropping = !(msg instanceof LastHttpContent);
            ReferenceCountUtil.release(msg);
            return;
        }
        ctx.fireChannelRead(msg);
    }

    /** Would the entry refuse this head whatever its body? Unsure counts as yes: the entry then says why. */
    private boolean refused(HttpRequest req) {
        String host;
        int port;
        String path;
        if (tlsHost != null) {
            host = tlsHost;
            port = tlsPort;
            path = req.uri();
        } else if (listener == Listener.PROXY) {
            try {
                URI uri = new URI(req.uri());
                Authority a = uri.getRawAuthority() == null ? null : Authority.parse(uri.getRawAuthority(), 80);
                if (a == null || a.literal()) {
                    return true;
                }
                host = a.host();
                port = a.port();
                path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
            } catch (java.net.URISyntaxException e) {
                return true;
            }
        } else {
            Authority a = Authority.parse(req.headers().get(HttpHeaderNames.HOST), 80);
            if (a == null || a.literal()) {
                return true;
            }
            host = a.host();
            port = a.port();
            path = req.uri();
        }
        String clean = AuditEvent.trimPath(path);
        EgressPolicy policy = broker.policy();
        return !policy.request(host, port, req.method().name(), clean).allowed()
                || policy.connect(host, port).requestRules() && RequestPath.problem(clean) != null;
    }
}
