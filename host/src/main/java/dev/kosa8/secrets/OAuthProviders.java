package dev.kosa8.secrets;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The OAuth providers whose logins the broker keeps outside, as data:
 * {@code oauth-providers.toml} beside this class (each provider's token
 * endpoints and API hosts; docs/secrets.md says where each was found).
 */
public record OAuthProviders(List<OAuthProvider> all) {
    public static final OAuthProviders NONE = new OAuthProviders(List.of());
    private static final String RESOURCE = "oauth-providers.toml";

    public OAuthProviders {
        all = List.copyOf(all);
    }

    /** kosa8's own table. */
    public static OAuthProviders builtIn() {
        return Holder.BUILT_IN;
    }

    /** Read once per process, when the first broker starts. */
    private static final class Holder {
        static final OAuthProviders BUILT_IN = read();
    }

    private static OAuthProviders read() {
        try (InputStream in = OAuthProviders.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from kosa8's jar");
            }
            return parse(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static OAuthProviders parse(String toml) throws IOException {
        JsonNode root = new TomlMapper().readTree(toml);
        List<OAuthProvider> providers = new ArrayList<>();
        for (JsonNode p : root.path("providers")) {
            providers.add(new OAuthProvider(p.path("name").asText(), strings(p.path("token_endpoints")),
                    strings(p.path("api_hosts"))));
        }
        return new OAuthProviders(providers);
    }

    private static List<String> strings(JsonNode array) {
        List<String> r = new ArrayList<>();
        array.forEach(n -> r.add(n.asText()));
        return r;
    }

    /** The provider whose token endpoint a request to {@code host:port} at {@code path} goes to. */
    public Optional<OAuthProvider> tokenEndpoint(String host, int port, String path) {
        if (port != 443) {
            return Optional.empty();
        }
        return all.stream().filter(p -> p.isTokenEndpoint(host, path)).findFirst();
    }

    /** Whether {@code host} serves a token endpoint: TLS to it is always read, whatever the policy says. */
    public boolean isTokenHost(String host, int port) {
        return port == 443 && all.stream().anyMatch(p -> p.tokenHosts().contains(host));
    }
}
