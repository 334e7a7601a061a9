package dev.kosa8.egress;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;

/**
 * One line of a sandbox's network audit log. Decisions and sizes only: never
 * a header value, a body, a query string or a key.
 *
 * @param listener  dns, proxy, http (transparent port 80) or tls (transparent port 443)
 * @param path      the request's path without its query; null where no request was read
 * @param address   the address the broker dialed (or refused)
 * @param bytesOut  bytes from the guest to the upstream
 * @param bytesIn   bytes from the upstream to the guest
 * @param secret    the secret the broker put into the request, or whose placeholder it refused: its name, never
 *                  its value
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record AuditEvent(Instant time, String listener, String host, Integer port, String method, String path,
                         String address, String decision, String reason, Long bytesOut, Long bytesIn,
                         Long durationMs, String secret) {
    public static final int MAX_PATH = 256;

    public AuditEvent {
        path = path == null ? null : trimPath(path);
    }

    /** An event that involves no secret. */
    public AuditEvent(Instant time, String listener, String host, Integer port, String method, String path,
                      String address, String decision, String reason, Long bytesOut, Long bytesIn, Long durationMs) {
        this(time, listener, host, port, method, path, address, decision, reason, bytesOut, bytesIn, durationMs, null);
    }

    /**
     * A reason as the log keeps it: text the guest chose (a request target, a
     * header value, a parser's complaint about them) is always quoted in
     * reasons, and the log keeps the quotes but not what is inside them. The
     * guest's own answer carries the full text.
     */
    static String redact(String reason) {
        return reason == null ? null : reason.replaceAll("'[^']*'", "'…'");
    }

    /** The path without query or fragment, cut to {@value #MAX_PATH} characters. */
    static String trimPath(String p) {
        int q = p.indexOf('?');
        int h = p.indexOf('#');
        int end = q < 0 ? h : h < 0 ? q : Math.min(q, h);
        String s = end < 0 ? p : p.substring(0, end);
        return s.length() > MAX_PATH ? s.substring(0, MAX_PATH) + "..." : s;
    }
}
