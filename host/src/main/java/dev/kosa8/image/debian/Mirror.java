package dev.kosa8.image.debian;

import java.net.URI;
import java.util.Map;

/**
 * Where one archive is fetched from: {@code https://deb.debian.org/debian}
 * unless {@code KOSA8_DEBIAN_MIRROR} names another (and
 * {@code https://deb.debian.org/debian-security}, or
 * {@code KOSA8_DEBIAN_SECURITY_MIRROR}, for the security suite). Plain http
 * is allowed: what is fetched is checked against the signature, not the
 * connection.
 */
public record Mirror(URI base) {
    public static final String DEFAULT = "https://deb.debian.org/debian";
    public static final String DEFAULT_SECURITY = "https://deb.debian.org/debian-security";

    public Mirror {
        String s = base.getScheme();
        if (s == null || !(s.equals("http") || s.equals("https")) || base.getHost() == null) {
            throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.USAGE,
                    "the Debian mirror must be an http or https URL, not " + base,
                    "set KOSA8_DEBIAN_MIRROR to a URL like " + DEFAULT);
        }
        String text = base.toString();
        if (text.endsWith("/")) {
            base = URI.create(text.substring(0, text.length() - 1));
        }
    }

    public static Mirror main(Map<String, String> env) {
        return of(env.getOrDefault("KOSA8_DEBIAN_MIRROR", DEFAULT));
    }

    public static Mirror security(Map<String, String> env) {
        return of(env.getOrDefault("KOSA8_DEBIAN_SECURITY_MIRROR", DEFAULT_SECURITY));
    }

    static Mirror of(String url) {
        try {
            return new Mirror(URI.create(url.strip()));
        } catch (IllegalArgumentException e) {
            throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.USAGE,
                    "the Debian mirror is not a URL: " + url, "set KOSA8_DEBIAN_MIRROR to a URL like " + DEFAULT);
        }
    }

    /** The URL of {@code path} under the mirror (like {@code dists/bookworm/InRelease}). */
    public URI resolve(String path) {
        return URI.create(base + "/" + path);
    }
}
