package dev.kosa8.egress;

import dev.kosa8.secrets.OAuthProvider;
import dev.kosa8.secrets.TokenRequests;
import dev.kosa8.secrets.TokenResponses;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;

/**
 * A request to an OAuth token endpoint and its response, as the broker
 * rewrites them ({@link OAuthLogins}): the real refresh (or id) token put
 * into the request's body in place of its placeholder, and the tokens of the
 * response swapped for placeholders before any of it reaches the guest. The
 * response arrives whole: gathered within {@link TokenResponses#MAX_BODY}
 * after gzip or deflate are undone, chunked or not; anything else is refused.
 */
final class TokenExchange {
    private static final SecureRandom RANDOM = new SecureRandom();

    private TokenExchange() {
    }

    /**
     * Puts the real tokens into {@code f}'s request body.
     *
     * @return why the request is refused, or null
     */
    static String swapIn(HttpForward f, Map<String, String> realByPlaceholder) {
        FullHttpRequest req = f.request();
        if (req instanceof SpooledRequest) {
            return "the token request's body has " + SpooledRequest.bodyLength(req) + " bytes, over the "
                    + TokenRequests.MAX_BODY + " the broker reads for OAuth tokens";
        }
        byte[] body = ByteBufUtil.getBytes(req.content());
        TokenRequests.Result r = TokenRequests.swap(body, req.headers().get(HttpHeaderNames.CONTENT_TYPE),
                realByPlaceholder);
        return switch (r) {
            case TokenRequests.Refused x -> x.why();
            case TokenRequests.Swapped x -> {
                if (!x.fields().isEmpty()) {
                    FullHttpRequest next = req.replace(Unpooled.wrappedBuffer(x.body()));
                    req.release();
                    f.replaceRequest(next, x.fields().stream().map(n -> "oauth " + n).toList());
                }
                yield null;
            }
        };
    }

    /**
     * What goes to the guest instead of {@code full}: the same response, its tokens swapped for placeholders (or
     * {@code full} itself when it had none), or a refusal. {@code full} is the caller's to release.
     */
    record Taken(FullHttpResponse response, String refused, List<String> fields) {
        Taken(FullHttpResponse response, String refused) {
            this(response, refused, List.of());
        }
    }

    static Taken takeOut(FullHttpResponse full, OAuthProvider p, OAuthLogins logins) {
        byte[] body = ByteBufUtil.getBytes(full.content());
        boolean success = full.status().code() / 100 == 2;
        return switch (TokenResponses.rewrite(body, success, RANDOM)) {
            case TokenResponses.Refused x -> new Taken(null, x.why() + "; none of it was passed on");
            case TokenResponses.Rewritten x -> {
                if (x.tokens().isEmpty()) {
                    yield new Taken(full, null);
                }
                FullHttpResponse out = full.replace(Unpooled.wrappedBuffer(x.body()));
                out.headers().remove(HttpHeaderNames.TRANSFER_ENCODING);
                out.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, x.body().length);
                logins.learn(p, x.tokens()); // bound before the guest can send a placeholder back
                yield new Taken(out, null, x.tokens().stream().map(TokenResponses.Token::field).toList());
            }
        };
    }
}
