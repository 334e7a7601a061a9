package dev.kosa8.egress;

import com.sun.net.httpserver.HttpExchange;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A provider's OAuth token endpoint and an API behind it, on {@link TestUpstream}s: the authorization-code grant
 * (code {@value #CODE}) and the refresh grant (the newest real refresh token, form or JSON) issue a new generation of
 * real tokens (access, refresh, and a JWT id_token) in RFC 6749's JSON; the API answers 200 only to the newest real
 * access token in {@code Authorization: Bearer}. What each got is recorded, so a test can tell which tokens crossed.
 */
public final class FakeOAuth {
    public static final String CODE = "good-authorization-code";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

    /** How the token endpoint answers. */
    public enum Mode { JSON, GZIP, CHUNKED, HUGE, FORM }

    public volatile Mode mode = Mode.JSON;
    /** Every real token issued, newest last. */
    public final List<String> issued = Collections.synchronizedList(new ArrayList<>());
    /** The bodies the token endpoint received. */
    public final List<String> tokenRequests = Collections.synchronizedList(new ArrayList<>());
    /** The Authorization headers the API received. */
    public final List<String> apiAuthorizations = Collections.synchronizedList(new ArrayList<>());
    private volatile String access;
    private volatile String refresh;
    private int generation;

    public FakeOAuth(TestUpstream token, String tokenPath, TestUpstream api, String apiPath) {
        token.handle(tokenPath, this::token);
        api.handle(apiPath, this::api);
    }

    public String access() {
        return access;
    }

    public synchronized int generation() {
        return generation;
    }

    public String refresh() {
        return refresh;
    }

    private synchronized void token(HttpExchange x) throws IOException {
        String body = new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        tokenRequests.add(body);
        Map<String, String> fields = fields(body, x.getRequestHeaders().getFirst("Content-Type"));
        boolean ok = "authorization_code".equals(fields.get("grant_type")) && CODE.equals(fields.get("code"))
                || "refresh_token".equals(fields.get("grant_type")) && refresh != null
                && refresh.equals(fields.get("refresh_token"));
        if (!ok) {
            reply(x, 400, "{\"error\":\"invalid_grant\"}".getBytes(StandardCharsets.UTF_8), false);
            return;
        }
        generation++;
        access = "fake-at01-" + random(90);
        refresh = "1//0g" + random(60);
        String id = jwt("{\"sub\":\"user-1\",\"email\":\"dev@example.com\",\"gen\":" + generation + "}");
        issued.addAll(List.of(access, refresh, id));
        String json = "{\"access_token\":\"" + access + "\",\"token_type\":\"Bearer\",\"expires_in\":3600,"
                + "\"refresh_token\":\"" + refresh + "\",\"id_token\":\"" + id + "\",\"scope\":\"user:inference\""
                + (mode == Mode.HUGE ? ",\"pad\":\"" + "x".repeat(70_000) + "\"" : "") + "}";
        if (mode == Mode.FORM) {
            reply(x, 200, ("access_token=" + access + "&refresh_token=" + refresh).getBytes(StandardCharsets.UTF_8),
                    false);
            return;
        }
        reply(x, 200, json.getBytes(StandardCharsets.UTF_8), mode == Mode.GZIP);
    }

    private void api(HttpExchange x) throws IOException {
        x.getRequestBody().readAllBytes();
        String auth = x.getRequestHeaders().getFirst("Authorization");
        apiAuthorizations.add(String.valueOf(auth));
        boolean ok = access != null && ("Bearer " + access).equals(auth);
        reply(x, ok ? 200 : 401, (ok ? "hello, token " + generation : "unauthorized").getBytes(StandardCharsets.UTF_8),
                false);
    }

    private void reply(HttpExchange x, int status, byte[] body, boolean gzip) throws IOException {
        x.getResponseHeaders().set("Content-Type", mode == Mode.FORM && status == 200
                ? "application/x-www-form-urlencoded" : "application/json");
        if (gzip) {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            try (var gz = new java.util.zip.GZIPOutputStream(b)) {
                gz.write(body);
            }
            body = b.toByteArray();
            x.getResponseHeaders().set("Content-Encoding", "gzip");
        }
        boolean chunked = mode == Mode.CHUNKED || mode == Mode.HUGE;
        x.sendResponseHeaders(status, chunked ? 0 : body.length);
        try (OutputStream out = x.getResponseBody()) {
            if (chunked) {
                for (int i = 0; i < body.length; i += 7) {
                    out.write(body, i, Math.min(7, body.length - i));
                    out.flush();
                }
            } else {
                out.write(body);
            }
        }
    }

    static Map<String, String> fields(String body, String type) {
        Map<String, String> r = new HashMap<>();
        if (type != null && type.startsWith("application/json")) {
            try {
                new com.fasterxml.jackson.databind.ObjectMapper().readTree(body).properties()
                        .forEach(e -> r.put(e.getKey(), e.getValue().asText()));
            } catch (IOException e) {
                return r;
            }
            return r;
        }
        for (String pair : body.split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                r.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return r;
    }

    static String jwt(String claims) {
        Base64.Encoder b = Base64.getUrlEncoder().withoutPadding();
        return b.encodeToString("{\"alg\":\"RS256\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + b.encodeToString(claims.getBytes(StandardCharsets.UTF_8)) + "." + random(86);
    }

    static String random(int n) {
        StringBuilder b = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            b.append(ALNUM.charAt(RANDOM.nextInt(ALNUM.length())));
        }
        return b.toString();
    }
}
