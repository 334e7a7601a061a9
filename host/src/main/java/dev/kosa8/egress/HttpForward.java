package dev.kosa8.egress;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.ReferenceCountUtil;
import java.time.Instant;
import java.util.List;

/**
 * Carries one allowed plain-HTTP request to its upstream and the response
 * back. The broker re-frames the request from its own parse (so the upstream
 * sees exactly the request the policy judged), strips hop-by-hop headers,
 * dials the address it resolved and checked, and never follows a redirect:
 * a 3xx goes back to the guest, whose next request is judged on its own.
 * The guest's connection stays open for its next request when the response
 * had a length of its own (Content-Length or chunked), and is closed after
 * it otherwise, so the framing the guest sees is never ambiguous. While it
 * stays open, its requests to the same host reuse one upstream connection
 * ({@link UpstreamSlot}), opened to the address checked when it was dialed.
 * This class prepares and sends the request; {@link UpstreamDial} finds it
 * its upstream connection, and {@link ResponseRelay} carries the response back.
 */
final class HttpForward {
    static final List<CharSequence> HOP_BY_HOP = List.of(HttpHeaderNames.CONNECTION,
            HttpHeaderNames.KEEP_ALIVE, HttpHeaderNames.PROXY_AUTHORIZATION, HttpHeaderNames.PROXY_AUTHENTICATE,
            HttpHeaderNames.PROXY_CONNECTION, HttpHeaderNames.TE, HttpHeaderNames.TRAILER, HttpHeaderNames.UPGRADE);

    static final String CODEC = "codec";
    private static final String INFLATE = "inflate";
    private static final String GATHER = "gather-token-response";

    private final Broker broker;
    private final Listener listener;
    private final Channel guest;
    private FullHttpRequest request;
    private final String host;
    private final int port;
    private final String path;
    private final String reason;
    private final boolean tls;
    /** The guest is one HTTP/2 stream: its protocol frames each response, and the stream ends with it. */
    private final boolean framed;
    /** A WebSocket handshake over HTTP/1.1: on the server's 101 both sides become a relay of bytes. */
    private final boolean webSocket;
    private final Runnable next;
    private final UpstreamSlot slot;
    /** The names of the tokens put into this request's body ({@link TokenExchange}). */
    private final List<String> swapped = new java.util.ArrayList<>();
    /** The guest asked to keep its connection (HTTP/1.1 without "Connection: close", or 1.0 with keep-alive). */
    private boolean guestKeepAlive;
    private boolean bodySent; // the whole body is written: until then (an early answer) the upstream is not kept
    /** The secrets put into this request: those bound to its host, over TLS only. */
    private final List<SecretBinding> inject;
    /** Some secret is bound to this host: its responses are decompressed so that all of them can be scrubbed. */
    private final boolean boundHost;
    /** Takes real keys out of the response, or null when the sandbox holds none. */
    private final dev.kosa8.secrets.KeyScrubber scrubber;
    /** The provider whose token endpoint this request goes to (over TLS), else null: its response is rewritten. */
    private final dev.kosa8.secrets.OAuthProvider login;

    /**
     * @param tls    the upstream speaks TLS, verified by the broker against the host name
     * @param framed the guest is an HTTP/2 stream
     * @param next   called on the guest's event loop when the response is complete and the guest's connection
     *               may carry another request
     */
    HttpForward(Broker broker, Listener listener, Channel guest, FullHttpRequest request, String host, int port,
                String path, String reason, boolean tls, boolean framed, UpstreamSlot slot, Runnable next) {
        this.tls = tls;
        this.framed = framed;
        this.webSocket = tls && !framed && isWebSocketHandshake(request);
        this.slot = slot;
        this.next = next;
        this.broker = broker;
        this.listener = listener;
        this.guest = guest;
        this.request = request;
        this.host = host;
        this.port = port;
        this.path = path;
        this.reason = reason;
        SecretBindings secrets = broker.secrets();
        List<SecretBinding> bound = secrets.boundTo(host, port);
        this.login = tls && request.method() == io.netty.handler.codec.http.HttpMethod.POST
                ? broker.logins().endpoint(host, port, request.uri()).orElse(null) : null;
        this.boundHost = !bound.isEmpty() || login != null;
        this.inject = tls ? bound : List.of();
        this.scrubber = secrets.scrubber();
    }

    FullHttpRequest request() {
        return request;
    }

    Channel guest() {
        return guest;
    }

    String host() {
        return host;
    }

    int port() {
        return port;
    }

    /** The upstream speaks TLS, verified by the broker against the host name. */
    boolean tls() {
        return tls;
    }

    /** The guest is one HTTP/2 stream. */
    boolean framed() {
        return framed;
    }

    /** The request is a WebSocket handshake over HTTP/1.1. */
    boolean webSocket() {
        return webSocket;
    }

    UpstreamSlot slot() {
        return slot;
    }

    /** Called when the response is complete and the guest's connection may carry another request. */
    Runnable next() {
        return next;
    }

    /** The guest asked to keep its connection: known once the request is sent. */
    boolean guestKeepAlive() {
        return guestKeepAlive;
    }

    /** The request's whole body is written upstream. */
    boolean bodySent() {
        return bodySent;
    }

    /** Some secret is bound to this host, or it is a token endpoint: its responses are decompressed to scrub. */
    boolean boundHost() {
        return boundHost;
    }

    /** The provider whose token endpoint this request goes to, else null. */
    dev.kosa8.secrets.OAuthProvider login() {
        return login;
    }

    OAuthLogins logins() {
        return broker.logins();
    }

    /** Takes real keys out of the response, or null when the sandbox holds none. */
    dev.kosa8.secrets.KeyScrubber scrubber() {
        return scrubber;
    }

    /** The request's body was rewritten: {@code next} replaces it, its tokens named {@code fields}. */
    void replaceRequest(FullHttpRequest next, List<String> fields) {
        request = next;
        swapped.addAll(fields);
    }

    void start() {
        if (!tls && request.method() == io.netty.handler.codec.http.HttpMethod.POST
                && broker.logins().endpoint(host, 443, request.uri()).isPresent()) {
            // its answer would carry tokens the broker never reads over plain HTTP
            fail(HttpResponseStatus.FORBIDDEN, "an OAuth token endpoint is reached over HTTPS only: use https://"
                    + host, null);
            return;
        }
        if (login != null) {
            String refused = TokenExchange.swapIn(this, broker.logins().realByPlaceholder(login));
            if (refused != null) {
                fail(HttpResponseStatus.BAD_REQUEST, refused, null);
                return;
            }
        }
        guest.config().setAutoRead(false);
        new UpstreamDial(broker, this).connect(host + ":" + port);
    }

    /** The upstream's TLS failed (typically its certificate did not verify): a 502 that says so, and a log line. */
    void upstreamFailed(Upstreams.Target target, Throwable cause) {
        Exchange exchange = new Exchange(broker.audit(), listener, host, port, request.method().name(), path,
                target.via(), target.reason(reason));
        Throwable c = cause instanceof io.netty.handler.codec.DecoderException && cause.getCause() != null
                ? cause.getCause() : cause;
        String why = "upstream " + host + ": " + c.getMessage();
        exchange.outcome("failed: " + why);
        exchange.end();
        ReferenceCountUtil.safeRelease(request);
        guest.writeAndFlush(Denials.response(HttpResponseStatus.BAD_GATEWAY, "kosa8: " + why + "\n"))
                .addListener(ChannelFutureListener.CLOSE);
    }

    /** Sends the request on an open upstream connection, with this request's relay for the response. */
    void send(Channel up, Upstreams.Target target) {
        Exchange exchange = new Exchange(broker.audit(), listener, host, port, request.method().name(), path,
                target.via(), target.reason(reason));
        exchange.sent(SpooledRequest.bodyLength(request));
        prepare(request);
        List<String> used = new java.util.ArrayList<>(swapped);
        if (!inject.isEmpty()) {
            used.addAll(SecretInjection.apply(request, inject));
        }
        if (login != null) {
            request.headers().set(HttpHeaderNames.ACCEPT_ENCODING, HttpHeaderValues.IDENTITY);
        }
        if (!used.isEmpty()) {
            exchange.secret(String.join(",", used));
        }
        if (boundHost && up.pipeline().get(INFLATE) == null) {
            // asked for identity (SecretInjection), but a server may compress anyway: a real key must not pass
            // hidden inside gzip or deflate
            up.pipeline().addAfter(CODEC, INFLATE, new io.netty.handler.codec.http.HttpContentDecompressor(0));
        }
        if (login != null && up.pipeline().get(GATHER) == null) {
            // a token response is read whole (within its bound) before any of it goes to the guest
            up.pipeline().addAfter(INFLATE, GATHER, new io.netty.handler.codec.http.HttpObjectAggregator(
                    dev.kosa8.secrets.TokenResponses.MAX_BODY));
        } else if (login == null && up.pipeline().get(GATHER) != null) {
            up.pipeline().remove(GATHER); // a kept connection's next request is an ordinary one
        }
        up.pipeline().addLast("response", new ResponseRelay(this, exchange, up, target));
        SpooledRequest.write(up, request, CODEC, () -> bodySent = true).addListener((ChannelFutureListener) w -> {
            if (w.isSuccess()) {
                w.channel().read();
            } else {
                w.channel().close();
            }
        });
    }

    private void prepare(FullHttpRequest r) {
        guestKeepAlive = io.netty.handler.codec.http.HttpUtil.isKeepAlive(r); // before its Connection header goes
        HttpHeaders h = r.headers();
        for (String token : h.getAll(HttpHeaderNames.CONNECTION)) {
            for (String name : token.split(",")) {
                h.remove(name.strip());
            }
        }
        HOP_BY_HOP.forEach(h::remove);
        for (var x : io.netty.handler.codec.http2.HttpConversionUtil.ExtensionHeaderNames.values()) {
            h.remove(x.text()); // what Netty's HTTP/2 codec added, or the guest sent in their name
        }
        if (webSocket) {
            h.set(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET);
            h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.UPGRADE);
        }
        h.set(HttpHeaderNames.HOST, port == 80 ? host : host + ":" + port);
        h.remove(HttpHeaderNames.TRANSFER_ENCODING);
        h.set(HttpHeaderNames.CONTENT_LENGTH, SpooledRequest.bodyLength(r));
    }

    /** An HTTP/1.1 GET asking to become a WebSocket (RFC 6455 4.1): Upgrade names it, Connection names Upgrade. */
    static boolean isWebSocketHandshake(FullHttpRequest r) {
        HttpHeaders h = r.headers();
        return r.method() == io.netty.handler.codec.http.HttpMethod.GET
                && h.containsValue(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET, true)
                && h.containsValue(HttpHeaderNames.CONNECTION, HttpHeaderValues.UPGRADE, true);
    }

    void fail(HttpResponseStatus status, String why, String address) {
        fail(Denials.ending(status, broker.sandboxId(), null, why), why, address);
    }

    void fail(io.netty.handler.codec.http.FullHttpResponse res, String why, String address) {
        ReferenceCountUtil.safeRelease(request);
        broker.audit().write(new AuditEvent(Instant.now(), listener.label(), host, port, request.method().name(), path,
                address, "deny", why, null, null, null));
        guest.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
    }
}
