package dev.kosa8.egress;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Instant;

/**
 * The HTTP side of the broker: the explicit proxy (CONNECT and absolute-form
 * requests) and the transparent port 80 (routed by Host). A CONNECT that the
 * policy allows turns the connection into a {@link TlsRouter} that holds the
 * TLS server name to the CONNECT target; plain requests go to
 * {@link HttpForward}. Everything else gets an HTTP error saying why.
 */
final class HttpEntry extends SimpleChannelInboundHandler<FullHttpRequest> {
    /** The name of the idle timer in front of the HTTP handlers; a CONNECT tunnel leaves without it. */
    static final String IDLE = "idle";

    private final Broker broker;
    private final Listener listener;
    /** The TLS server name of an intercepted connection, else null. */
    private final String tlsHost;
    private final int tlsPort;
    /**
     * A request is being judged or carried. Requests come one at a time: a
     * connection refused ends, a CONNECT becomes a tunnel, a forwarded
     * request's response must be complete before the next is read.
     */
    private boolean busy;
    /** The guest sent a request before the last one's response: it is dropped and the connection ends after that response. */
    private boolean pipelined;
    /** The upstream connections this guest connection reuses; made when the handler joins a channel, or given. */
    private UpstreamSlot upstream;
    /** This entry serves one HTTP/2 stream, whose protocol frames the response and ends with it. */
    private final boolean stream;

    HttpEntry(Broker broker, Listener listener) {
        this(broker, listener, null, -1, null, false);
    }

    /** For the requests inside an intercepted HTTP/1.1 connection to {@code tlsHost:tlsPort}. */
    HttpEntry(Broker broker, Listener listener, String tlsHost, int tlsPort) {
        this(broker, listener, tlsHost, tlsPort, null, false);
    }

    /**
     * @param upstreams the upstream connections to reuse, shared by the streams of one HTTP/2 connection; null for
     *                  this connection's own
     * @param stream    the entry serves one HTTP/2 stream
     */
    HttpEntry(Broker broker, Listener listener, String tlsHost, int tlsPort, UpstreamSlot upstreams, boolean stream) {
        this.broker = broker;
        this.listener = listener;
        this.tlsHost = tlsHost;
        this.tlsPort = tlsPort;
        this.upstream = upstreams;
        this.stream = stream;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (upstream == null) {
            upstream = new UpstreamSlot(ctx.channel(), 1);
        }
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (busy) {
            pipelined = true;
            return;
        }
        busy = true;
        if (req.decoderResult().isFailure()) {
            Throwable c = req.decoderResult().cause();
            HttpResponseStatus status = c instanceof TooLongHttpHeaderException
                    ? HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
                    : c instanceof TooLongHttpLineException ? HttpResponseStatus.REQUEST_URI_TOO_LONG
                    : c instanceof TooLongFrameException ? HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE
                    : HttpResponseStatus.BAD_REQUEST;
            // the broker's own texts stay readable in the log; a parser's complaint may quote the guest's bytes
            boolean ours = c instanceof StrictRequestDecoder.SmugglingRefused || c instanceof TooLongFrameException;
            refuse(ctx, status, null, -1, null, null, "malformed request: "
                    + (ours ? c.getMessage() : "'" + c.getMessage() + "'"));
            return;
        }
        if (tlsHost != null) {
            intercepted(ctx, req);
        } else if (req.method() == HttpMethod.CONNECT) {
            connect(ctx, req);
        } else {
            plain(ctx, req);
        }
    }

    private void connect(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (listener != Listener.PROXY) {
            refuse(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, null, -1, "CONNECT", null,
                    "CONNECT on the transparent port 80");
            return;
        }
        Authority a = Authority.parse(req.uri(), -1);
        if (a == null || a.port() < 0) {
            refuse(ctx, HttpResponseStatus.BAD_REQUEST, null, -1, "CONNECT", null,
                    "CONNECT needs host:port, not '" + shown(req.uri()) + "'");
            return;
        }
        if (a.literal()) {
            refuse(ctx, HttpResponseStatus.FORBIDDEN, a.host(), a.port(), "CONNECT", null,
                    "CONNECT to an IP address is refused; name the host, which the broker resolves and checks");
            return;
        }
        Decision d = broker.policy().connect(a.host(), a.port());
        if (!d.allowed()) {
            refuse(ctx, HttpResponseStatus.FORBIDDEN, a.host(), a.port(), "CONNECT", null, d.reason(), true);
            return;
        }
        // resolved before the answer, so a name the broker will not dial gets a 403 that says why
        ctx.channel().config().setAutoRead(false);
        broker.resolveAsync(a.host(), a.port()).whenComplete((target, err) -> ctx.executor().execute(() -> {
            if (err != null) {
                Upstreams.Refused r = Upstreams.refusal(err);
                answer(ctx, Denials.unreachable(broker.sandboxId(), r), a.host(), a.port(), "CONNECT", null,
                        r.getMessage(), null);
                return;
            }
            ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                    new HttpResponseStatus(200, "Connection established")));
            // the router joins before the HTTP handlers leave, so bytes the decoder already holds reach it
            ctx.pipeline().addLast("tls-router", new TlsRouter(broker, listener, a.host(), a.port()));
            ctx.pipeline().remove(this);
            ctx.pipeline().remove(BodySpool.class);
            ctx.pipeline().remove(HeadGate.class);
            ctx.pipeline().remove(HttpResponseEncoder.class);
            ctx.pipeline().remove(StrictRequestDecoder.class);
            if (ctx.pipeline().get(IDLE) != null) {
                ctx.pipeline().remove(IDLE);
            }
            ctx.channel().config().setAutoRead(true);
        }));
    }

    /**
     * A request inside intercepted TLS: its Host must name the server the TLS
     * connection was opened for (a guest must not reach one allowed name
     * through another's connection), and the policy judges method and path.
     */
    private void intercepted(ChannelHandlerContext ctx, FullHttpRequest req) {
        String method = req.method().name();
        String path = AuditEvent.trimPath(req.uri());
        if (method.equals("CONNECT") || !req.uri().startsWith("/")) {
            refuse(ctx, HttpResponseStatus.BAD_REQUEST, tlsHost, tlsPort, method, null,
                    "inside TLS a request names a path, not '" + shown(req.uri()) + "'");
            return;
        }
        // HTTP/1.1's Host; HTTP/2's :authority, which Netty's codec hands over as Host, beside any host header the
        // guest sent too: every one must name the server this connection was opened for
        java.util.List<String> hosts = req.headers().getAll(HttpHeaderNames.HOST);
        String stray = hosts.isEmpty() ? "" : null;
        for (String h : hosts) {
            Authority target = Authority.parse(h, tlsPort);
            if (target == null || !target.host().equals(tlsHost) || target.port() != tlsPort) {
                stray = h;
                break;
            }
        }
        if (stray != null) {
            refuse(ctx, HttpResponseStatus.MISDIRECTED_REQUEST, tlsHost, tlsPort, method, path, (stream
                    ? "the :authority '" : "the Host header '") + shown(stray) + "' differs from the TLS server name "
                    + tlsHost);
            return;
        }
        String bad = broker.policy().connect(tlsHost, tlsPort).requestRules() ? RequestPath.problem(path) : null;
        if (bad != null) {
            refuse(ctx, HttpResponseStatus.BAD_REQUEST, tlsHost, tlsPort, method, null, bad);
            return;
        }
        Decision d = broker.policy().request(tlsHost, tlsPort, method, path);
        if (!d.allowed()) {
            refuse(ctx, HttpResponseStatus.FORBIDDEN, tlsHost, tlsPort, method, path, d.reason(), true);
            return;
        }
        if (carriesMisplacedSentinel(ctx, req, tlsHost, tlsPort, method, path, true)) {
            return;
        }
        req.retain();
        new HttpForward(broker, listener, ctx.channel(), req, tlsHost, tlsPort, path, d.reason(), true, stream,
                upstream, () -> next(ctx)).start();
    }

    private void plain(ChannelHandlerContext ctx, FullHttpRequest req) {
        String method = req.method().name();
        String hostHeader = req.headers().get(HttpHeaderNames.HOST);
        Authority target;
        String path;
        if (listener == Listener.PROXY) {
            URI uri;
            try {
                uri = new URI(req.uri());
            } catch (URISyntaxException e) {
                uri = null;
            }
            if (uri == null || !"http".equalsIgnoreCase(uri.getScheme()) || uri.getRawAuthority() == null) {
                refuse(ctx, HttpResponseStatus.BAD_REQUEST, null, -1, method, null, "a proxy request needs an "
                        + "absolute http:// URI (use CONNECT for https), not '" + shown(req.uri()) + "'");
                return;
            }
            target = Authority.parse(uri.getRawAuthority(), 80);
            path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
            String query = uri.getRawQuery();
            req.setUri(query == null ? path : path + "?" + query);
            if (target != null && hostHeader != null && !target.equals(Authority.parse(hostHeader, 80))) {
                refuse(ctx, HttpResponseStatus.BAD_REQUEST, target.host(), target.port(), method, path,
                        "the Host header '" + shown(hostHeader) + "' differs from the request target");
                return;
            }
        } else {
            target = hostHeader == null ? null : Authority.parse(hostHeader, 80);
            path = req.uri();
            if (target != null && target.port() != 80) {
                refuse(ctx, HttpResponseStatus.BAD_REQUEST, target.host(), target.port(), method, null,
                        "the Host header names port " + target.port() + " on the transparent port 80");
                return;
            }
            if (!path.startsWith("/")) {
                refuse(ctx, HttpResponseStatus.BAD_REQUEST, null, -1, method, null, "the request target must be a "
                        + "path on the transparent port");
                return;
            }
        }
        if (target == null) {
            refuse(ctx, HttpResponseStatus.BAD_REQUEST, null, -1, method, null, "no valid Host");
            return;
        }
        if (target.literal()) {
            refuse(ctx, HttpResponseStatus.FORBIDDEN, target.host(), target.port(), method, path,
                    "requests to an IP address are refused; name the host");
            return;
        }
        String cleanPath = AuditEvent.trimPath(path);
        // only where a path rule judges the path: elsewhere (npm's "@scope%2fname") encoded slashes are normal
        String bad = broker.policy().connect(target.host(), target.port()).requestRules() ? RequestPath.problem(cleanPath)
                : null;
        if (bad != null) {
            refuse(ctx, HttpResponseStatus.BAD_REQUEST, target.host(), target.port(), method, null, bad);
            return;
        }
        Decision d = broker.policy().request(target.host(), target.port(), method, cleanPath);
        if (!d.allowed()) {
            refuse(ctx, HttpResponseStatus.FORBIDDEN, target.host(), target.port(), method, cleanPath, d.reason(),
                    true);
            return;
        }
        if (carriesMisplacedSentinel(ctx, req, target.host(), target.port(), method, cleanPath, false)) {
            return;
        }
        req.retain();
        new HttpForward(broker, listener, ctx.channel(), req, target.host(), target.port(), cleanPath, d.reason(), false,
                false, upstream, () -> next(ctx)).start();
    }

    /**
     * Refuses a request that carries a secret's placeholder where it may not
     * go: to another host (a prompt-injected agent sending what it believes
     * is its key somewhere: logged as a possible exfiltration), or to its own
     * host over plain HTTP, where the broker never sends a key.
     *
     * @return whether it refused
     */
    private boolean carriesMisplacedSentinel(ChannelHandlerContext ctx, FullHttpRequest req, String host, int port,
                                             String method, String path, boolean tls) {
        SecretBindings secrets = broker.secrets();
        var found = secrets.misplacedSentinel(req, host, port, tls);
        if (found.isEmpty() && req instanceof SpooledRequest spooled) {
            found = spooled.misplaced(secrets);
            if (found == null) {
                refuse(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE, host, port, method, path, "the secrets of the sandbox "
                        + "changed while the body of this request arrived, so it was searched for other placeholders "
                        + "than those in force now; nothing was sent upstream: send it again");
                return true;
            }
        }
        if (found.isEmpty()) {
            return false;
        }
        String name = found.get();
        boolean ownHost = !tls && broker.secrets().all().stream()
                .anyMatch(b -> b.name().equals(name) && b.host().equals(host));
        String reason = ownHost
                ? "the placeholder of secret " + name + " was sent to " + host + " over plain HTTP; the broker puts "
                        + "the key in only over HTTPS: use https://" + host
                : "the request carries the placeholder of secret " + name + ", which is bound to another host: "
                        + "possible exfiltration";
        refuse(ctx, HttpResponseStatus.FORBIDDEN, host, port, method, path, reason, false, name);
        return true;
    }

    /** A forwarded response is complete and the connection may carry another request. */
    private void next(ChannelHandlerContext ctx) {
        if (pipelined) {
            ctx.close(); // a request that came too early got no answer; the client retries on a new connection
            return;
        }
        busy = false;
        ctx.channel().config().setAutoRead(true);
    }

    private void refuse(ChannelHandlerContext ctx, HttpResponseStatus status, String host, int port, String method,
                        String path, String reason) {
        refuse(ctx, status, host, port, method, path, reason, false);
    }

    /** @param byPolicy the policy said no, so the answer names the command that would allow the host */
    private void refuse(ChannelHandlerContext ctx, HttpResponseStatus status, String host, int port, String method,
                        String path, String reason, boolean byPolicy) {
        refuse(ctx, status, host, port, method, path, reason, byPolicy, null);
    }

    private void refuse(ChannelHandlerContext ctx, HttpResponseStatus status, String host, int port, String method,
                        String path, String reason, boolean byPolicy, String secret) {
        answer(ctx, Denials.ending(status, broker.sandboxId(), byPolicy ? host : null, reason), host, port, method,
                path, reason, secret);
    }

    /** Logs a request that goes no further, gives the guest {@code res} and ends the connection. */
    private void answer(ChannelHandlerContext ctx, io.netty.handler.codec.http.FullHttpResponse res, String host,
                        int port, String method, String path, String reason, String secret) {
        broker.audit().write(new AuditEvent(Instant.now(), listener.label(), host, port < 0 ? null : port, method,
                path, null, "deny", AuditEvent.redact(reason), null, null, null, secret));
        ctx.writeAndFlush(res).addListener((ChannelFutureListener) f -> Denials.lingerClose(f.channel()));
    }

    private static String shown(String s) {
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }

    /** A connection idle between requests (none in flight) is closed; one waiting on its upstream is not. */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof io.netty.handler.timeout.IdleStateEvent && !busy) {
            ctx.close();
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
