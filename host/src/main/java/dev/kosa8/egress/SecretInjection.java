package dev.kosa8.egress;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;

/**
 * Puts real keys into a request bound for their host. Called only for
 * requests that arrived inside TLS the broker terminated and leave over TLS
 * the broker verifies ({@code HttpForward}): a key never crosses plain HTTP,
 * and never goes to a server whose certificate did not check out, because
 * the request is written only after the upstream handshake succeeded.
 *
 * <p>Each bound header is set, replacing whatever the guest sent in it,
 * placeholder or not: the guest decides nothing about what the key is or
 * where it goes. Git over HTTPS sends no credentials until a server answers
 * 401, and then needs a credential helper to answer with; so for git's smart
 * HTTP requests (and any request from git's own client) a secret sent in
 * {@code Authorization} goes as Basic auth,
 * which git hosts take a token in (user {@code x-access-token} unless the
 * guest named one), and git never has to ask.
 *
 * <p>An OAuth token from a login made inside ({@link SecretBinding#inPlace()})
 * is different: the guest chose the header, so the token replaces its
 * placeholder wherever the guest put it, in any header, and nothing is set
 * where the guest sent no placeholder.
 *
 * <p>The request also asks for an uncompressed response, so that the broker
 * can find a key a server echoes back and replace it by the placeholder before
 * the guest sees it.
 */
final class SecretInjection {
    static final String GIT_USER = "x-access-token";

    private SecretInjection() {
    }

    /** @return the names of the secrets put in */
    static List<String> apply(HttpRequest req, List<SecretBinding> bindings) {
        HttpHeaders h = req.headers();
        boolean git = isGit(req.uri()) || isGitClient(h.get(HttpHeaderNames.USER_AGENT));
        List<String> used = new java.util.ArrayList<>();
        for (SecretBinding b : bindings) {
            if (b.inPlace()) {
                if (replaceInPlace(h, b)) {
                    used.add(b.name());
                }
                continue;
            }
            used.add(b.name());
            if (git && b.headerName().equalsIgnoreCase(HttpHeaderNames.AUTHORIZATION.toString())) {
                h.set(HttpHeaderNames.AUTHORIZATION, basic(basicUser(h.get(HttpHeaderNames.AUTHORIZATION)), b.value()));
            } else {
                h.set(b.headerName(), b.headerValue());
            }
        }
        h.set(HttpHeaderNames.ACCEPT_ENCODING, HttpHeaderValues.IDENTITY);
        return used;
    }

    /** Replaces the binding's placeholder by its value in every header value that holds it. */
    private static boolean replaceInPlace(HttpHeaders h, SecretBinding b) {
        boolean any = false;
        for (String name : List.copyOf(h.names())) {
            List<String> values = h.getAll(name);
            if (values.stream().anyMatch(v -> v.contains(b.sentinel()))) {
                h.set(name, values.stream().map(v -> v.replace(b.sentinel(), b.value())).toList());
                any = true;
            }
        }
        return any;
    }

    /** Git's own client ("git/2.39.2"), which fetches a dumb-HTTP repository's files with plain GETs. */
    static boolean isGitClient(String userAgent) {
        return userAgent != null && userAgent.startsWith("git/");
    }

    /** Git's smart HTTP: ref discovery and the two pack services. */
    static boolean isGit(String uri) {
        int q = uri.indexOf('?');
        String path = q < 0 ? uri : uri.substring(0, q);
        String query = q < 0 ? "" : uri.substring(q + 1);
        return path.endsWith("/info/refs") && (query.contains("service=git-upload-pack")
                || query.contains("service=git-receive-pack"))
                || path.endsWith("/git-upload-pack") || path.endsWith("/git-receive-pack");
    }

    static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    /** The user name of the guest's own Basic credentials, if it sent sane ones; else the token user. */
    static String basicUser(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
            return GIT_USER;
        }
        try {
            String decoded = new String(Base64.getDecoder().decode(authorization.substring(6).strip()),
                    StandardCharsets.UTF_8);
            int colon = decoded.indexOf(':');
            String user = colon < 0 ? decoded : decoded.substring(0, colon);
            return user.matches("[A-Za-z0-9._@+-]{1,64}") ? user : GIT_USER;
        } catch (IllegalArgumentException e) {
            return GIT_USER;
        }
    }
}
