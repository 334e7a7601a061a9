package dev.kosa8.egress;

import java.util.Objects;

/**
 * One secret a running sandbox may use, as the broker holds it: the real value
 * goes into the requests to {@code host:port} that arrive over TLS the broker
 * terminated, and onward over TLS the broker verified; nowhere else. The guest
 * holds {@code sentinel}, a placeholder of the same length.
 *
 * @param headerName     the header the value is sent in, such as {@code Authorization}
 * @param headerTemplate its value, with {@code {}} where the secret goes, such as {@code Bearer {}}
 * @param inPlace        the value replaces the placeholder where the guest put it, in any header (an OAuth token
 *                       from a login made inside, {@link OAuthLogins}), instead of being set in {@code headerName}
 *                       on every request (a {@code kosa8 secret})
 */
public record SecretBinding(String name, String host, int port, String headerName, String headerTemplate,
                            String sentinel, String value, boolean inPlace) {
    /** A {@code kosa8 secret}: set in its header on every request to its host. */
    public SecretBinding(String name, String host, int port, String headerName, String headerTemplate,
                         String sentinel, String value) {
        this(name, host, port, headerName, headerTemplate, sentinel, value, false);
    }

    public SecretBinding {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(headerName, "headerName");
        Objects.requireNonNull(headerTemplate, "headerTemplate");
        Objects.requireNonNull(sentinel, "sentinel");
        Objects.requireNonNull(value, "value");
        if (!headerTemplate.contains("{}")) {
            throw new IllegalArgumentException("the header template of " + name + " has no {}");
        }
        if (sentinel.equals(value)) {
            throw new IllegalArgumentException("the placeholder of " + name + " must differ from its value");
        }
    }

    /**
     * What replaces the value in responses: the placeholder, which has the
     * value's length (responses keep their lengths), unless the value was
     * changed to one of another length after the placeholder was drawn; then
     * the placeholder cut or repeated to the value's length.
     */
    String standIn() {
        if (sentinel.length() == value.length()) {
            return sentinel;
        }
        StringBuilder b = new StringBuilder(value.length());
        while (b.length() < value.length()) {
            b.append(sentinel, 0, Math.min(sentinel.length(), value.length() - b.length()));
        }
        return b.toString();
    }

    boolean boundTo(String h, int p) {
        return host.equals(h) && port == p;
    }

    /** The header value with the real secret in it. */
    String headerValue() {
        return headerTemplate.replace("{}", value);
    }

    /** Never the value. */
    @Override
    public String toString() {
        return "SecretBinding[" + name + " for " + host + ":" + port + " in " + headerName + "]";
    }
}
