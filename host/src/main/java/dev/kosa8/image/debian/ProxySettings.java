package dev.kosa8.image.debian;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.net.ProxySelector;
import java.net.SocketAddress;
import java.net.URI;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The proxy the archive client goes through, from the environment as curl
 * and apt read it: {@code https_proxy} for https URLs, {@code http_proxy}
 * for http ones (lower case first, then upper case), and {@code no_proxy}
 * (host names, {@code .domain} suffixes, or {@code *}). A proxy URL with a
 * user name is refused: kosa8 does not send proxy credentials.
 */
public final class ProxySettings extends ProxySelector {
    private final Map<String, String> env;

    public ProxySettings(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    public static ProxySettings fromEnvironment() {
        return new ProxySettings(System.getenv());
    }

    /** The proxy for {@code uri}, or {@code NO_PROXY}. */
    @Override
    public List<Proxy> select(URI uri) {
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        String value = variable(scheme + "_proxy");
        if (value == null || value.isBlank() || bypassed(uri.getHost())) {
            return List.of(Proxy.NO_PROXY);
        }
        URI proxy;
        try {
            proxy = URI.create(value.contains("://") ? value.strip() : "http://" + value.strip());
        } catch (IllegalArgumentException e) {
            throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.USAGE,
                    scheme + "_proxy is not a URL: " + value, "set it to http://HOST:PORT");
        }
        if (proxy.getHost() == null) {
            throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.USAGE,
                    scheme + "_proxy names no host: " + value, "set it to http://HOST:PORT");
        }
        if (proxy.getUserInfo() != null) {
            throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.USAGE,
                    scheme + "_proxy carries a user name, and kosa8 does not send proxy credentials",
                    "use a proxy that needs none, or a local forwarding proxy that adds them");
        }
        int port = proxy.getPort() > 0 ? proxy.getPort() : 80;
        return List.of(new Proxy(Proxy.Type.HTTP, InetSocketAddress.createUnresolved(proxy.getHost(), port)));
    }

    @Override
    public void connectFailed(URI uri, SocketAddress sa, IOException ioe) {
        // nothing to learn: the request fails with the error
    }

    private boolean bypassed(String host) {
        String list = variable("no_proxy");
        if (list == null || host == null) {
            return false;
        }
        String h = host.toLowerCase(Locale.ROOT);
        for (String entry : list.split(",")) {
            String e = entry.strip().toLowerCase(Locale.ROOT);
            if (e.equals("*") || (!e.isEmpty() && (h.equals(e.startsWith(".") ? e.substring(1) : e)
                    || h.endsWith(e.startsWith(".") ? e : "." + e)))) {
                return true;
            }
        }
        return false;
    }

    private String variable(String name) {
        String v = env.get(name);
        return v != null ? v : env.get(name.toUpperCase(Locale.ROOT));
    }
}
