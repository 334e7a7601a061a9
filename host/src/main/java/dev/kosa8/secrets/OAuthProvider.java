package dev.kosa8.secrets;

import dev.kosa8.net.HostName;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One provider whose OAuth logins made inside a sandbox the broker keeps
 * outside: where its tokens are issued and which hosts read them.
 *
 * @param name           a short name, {@code [a-z][a-z0-9]{0,15}}: it names the kept tokens
 * @param tokenEndpoints the token endpoints, each {@code host/path} (https, port 443): responses to POSTs there
 *                       carry tokens, and refresh requests there carry the refresh token in their body
 * @param apiHosts       the hosts whose requests may carry the access token, in any header
 */
public record OAuthProvider(String name, List<String> tokenEndpoints, List<String> apiHosts) {
    private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9]{0,15}");

    public OAuthProvider {
        Objects.requireNonNull(name, "name");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("bad OAuth provider name '" + name + "': use [a-z][a-z0-9]{0,15}");
        }
        tokenEndpoints = List.copyOf(tokenEndpoints);
        apiHosts = List.copyOf(apiHosts);
        if (tokenEndpoints.isEmpty()) {
            throw new IllegalArgumentException("OAuth provider " + name + " has no token endpoint");
        }
        for (String e : tokenEndpoints) {
            int slash = e.indexOf('/');
            if (slash <= 0 || !e.substring(0, slash).equals(HostName.normalize(e.substring(0, slash)))) {
                throw new IllegalArgumentException("OAuth provider " + name + ": token endpoint '" + e
                        + "' is not host/path");
            }
        }
        for (String h : apiHosts) {
            if (!h.equals(HostName.normalize(h))) {
                throw new IllegalArgumentException("OAuth provider " + name + ": '" + h + "' is not a host name");
            }
        }
    }

    /** Whether a request to {@code host} at {@code path} (its query ignored) goes to one of the token endpoints. */
    public boolean isTokenEndpoint(String host, String path) {
        int q = path.indexOf('?');
        String p = q < 0 ? path : path.substring(0, q);
        return tokenEndpoints.contains(host + p);
    }

    /** The hosts of the token endpoints. */
    public List<String> tokenHosts() {
        return tokenEndpoints.stream().map(e -> e.substring(0, e.indexOf('/'))).distinct().toList();
    }
}
