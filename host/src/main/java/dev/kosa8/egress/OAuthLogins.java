package dev.kosa8.egress;

import dev.kosa8.secrets.OAuthProvider;
import dev.kosa8.secrets.OAuthProviders;
import dev.kosa8.secrets.TokenResponses;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The OAuth tokens of the logins made inside one sandbox, as its broker
 * holds them: learned from the token endpoints' responses
 * ({@link TokenResponses}), bound as {@link SecretBinding#inPlace() in-place}
 * secrets. An access token is bound to its provider's API hosts (its
 * placeholder becomes the token in any header of a request there); a refresh
 * or id token to the provider's token hosts, where a refresh or a token
 * exchange carries it in the body ({@code TokenRequests}).
 *
 * <p>The newest {@value #GENERATIONS} tokens of each provider and field stay
 * bound: a client may still use the access token it had before a refresh,
 * and OpenAI's token exchange answers an API key in {@code access_token}
 * beside the ChatGPT access token. Older ones are forgotten, their
 * placeholders then worth nothing anywhere.
 */
final class OAuthLogins {
    static final int GENERATIONS = 4;

    private final OAuthProviders providers;
    private final OAuthKeeper keeper;
    private final Runnable changed;
    /** provider → field → newest tokens first. */
    private final Map<String, Map<String, Deque<Numbered>>> tokens = new HashMap<>();
    private long counter;
    private volatile List<SecretBinding> bindings = List.of();

    private record Numbered(long n, TokenResponses.Token token) {
    }

    /** @param changed called after the bindings changed */
    OAuthLogins(OAuthProviders providers, OAuthKeeper keeper, Runnable changed) {
        this.providers = providers;
        this.keeper = keeper;
        this.changed = changed;
    }

    OAuthProviders providers() {
        return providers;
    }

    /** The provider whose token endpoint this request goes to. */
    Optional<OAuthProvider> endpoint(String host, int port, String path) {
        return providers.tokenEndpoint(host, port, path);
    }

    /** The real token behind each placeholder the guest may send to {@code p}'s token endpoint. */
    synchronized Map<String, String> realByPlaceholder(OAuthProvider p) {
        Map<String, String> r = new LinkedHashMap<>();
        tokens.getOrDefault(p.name(), Map.of()).values()
                .forEach(q -> q.forEach(t -> r.put(t.token().placeholder(), t.token().real())));
        return r;
    }

    /** Takes in the tokens of one response from {@code p}'s token endpoint, and hands them to the keeper. */
    void learn(OAuthProvider p, List<TokenResponses.Token> learned) {
        learn(p, learned, true);
    }

    /** Takes in tokens kept from before (a restarted daemon or broker), without handing them to the keeper again. */
    void restore(String provider, List<TokenResponses.Token> kept) {
        providers.all().stream().filter(p -> p.name().equals(provider)).findFirst()
                .ifPresent(p -> learn(p, kept, false));
    }

    private void learn(OAuthProvider p, List<TokenResponses.Token> learned, boolean keep) {
        if (learned.isEmpty()) {
            return;
        }
        synchronized (this) {
            Map<String, Deque<Numbered>> fields = tokens.computeIfAbsent(p.name(), k -> new HashMap<>());
            for (TokenResponses.Token t : learned) {
                Deque<Numbered> q = fields.computeIfAbsent(t.field(), k -> new ArrayDeque<>());
                q.addFirst(new Numbered(++counter, t));
                while (q.size() > GENERATIONS) {
                    q.removeLast();
                }
            }
            bindings = rebuild();
        }
        for (TokenResponses.Token t : keep ? learned : List.<TokenResponses.Token>of()) {
            keeper.kept(p, t);
        }
        changed.run();
    }

    /** Every token held, as bindings. */
    List<SecretBinding> bindings() {
        return bindings;
    }

    private List<SecretBinding> rebuild() {
        List<SecretBinding> r = new ArrayList<>();
        for (OAuthProvider p : providers.all()) {
            Map<String, Deque<Numbered>> fields = tokens.getOrDefault(p.name(), Map.of());
            fields.forEach((field, q) -> {
                List<String> hosts = field.equals("access_token") ? p.apiHosts() : p.tokenHosts();
                for (Numbered t : q) {
                    for (String host : hosts) {
                        r.add(new SecretBinding("oauth-" + p.name() + "-" + field + "-" + t.n(), host, 443,
                                "Authorization", "Bearer {}", t.token().placeholder(), t.token().real(), true));
                    }
                }
            });
        }
        return List.copyOf(r);
    }
}
