package dev.kosa8.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kosa8.egress.Broker;
import dev.kosa8.egress.OAuthKeeper;
import dev.kosa8.host.KosaException;
import dev.kosa8.secrets.OAuthProvider;
import dev.kosa8.secrets.OAuthProviders;
import dev.kosa8.secrets.SecretSpec;
import dev.kosa8.secrets.SecretStore;
import dev.kosa8.secrets.TokenResponses;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The OAuth logins made inside sandboxes, kept on the host: each real token a
 * broker learns ({@code egress.OAuthLogins}) goes into the secret store, as
 * {@code oauth_ID_PROVIDER_FIELD} (the sandbox's id, say
 * {@code oauth_0123456789ab_openai_refresh}: {@code kosa8 secret ls} lists
 * them), and its placeholder into the sandbox's {@code logins.json}, so that
 * a restarted daemon or a stopped and started sandbox still turns the
 * guest's placeholders into its tokens. Only the newest token of each field
 * is kept this way. Removing the sandbox removes its tokens from the store.
 *
 * <p>Brokers call in on their event loops; the store's writes (a file, or a
 * keyring's command) run on a thread of their own, in order.
 */
final class SandboxLogins {
    static final String PREFIX = "oauth_";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Supplier<SecretStore> store;
    private final SandboxLayout layout;
    private final Consumer<String> log;
    private final OAuthProviders providers;
    private final ExecutorService writer = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "kosa8-logins");
        t.setDaemon(true);
        return t;
    });

    SandboxLogins(Supplier<SecretStore> store, SandboxLayout layout, Consumer<String> log, OAuthProviders providers) {
        this.store = store;
        this.layout = layout;
        this.log = log;
        this.providers = providers;
    }

    /** The store's name of a sandbox's token: {@code oauth_ID_PROVIDER_FIELD}, FIELD without {@code _token}. */
    static String name(String id, String provider, String field) {
        return PREFIX + id + "_" + provider + "_" + field.replace("_token", "").toLowerCase(Locale.ROOT);
    }

    /** Wires a starting broker: what it learns is kept, and what was kept before is given back to it. */
    void attach(String id, Broker broker) {
        broker.logins(providers, keeper(id));
        kept(id).forEach(broker::restoreLogin);
    }

    /** Keeps what a broker of sandbox {@code id} learns, in order, off the broker's event loop. */
    OAuthKeeper keeper(String id) {
        return (provider, token) -> writer.execute(() -> keep(id, provider, token));
    }

    /** The tokens kept for sandbox {@code id}, by provider; one that cannot be read back is left out, and said. */
    Map<String, List<TokenResponses.Token>> kept(String id) {
        Map<String, List<TokenResponses.Token>> r = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : read(id).entrySet()) {
            JsonNode n = e.getValue();
            try {
                String real = store.get().value(e.getKey());
                r.computeIfAbsent(n.path("provider").asText(), k -> new java.util.ArrayList<>()).add(
                        new TokenResponses.Token(n.path("field").asText(), real, n.path("placeholder").asText()));
            } catch (KosaException | IllegalArgumentException ex) {
                log.accept("sandbox " + id + ": the login token " + e.getKey() + " cannot be read back ("
                        + ex.getMessage() + "); the agent has to log in again");
            }
        }
        return r;
    }

    private void keep(String id, OAuthProvider provider, TokenResponses.Token token) {
        String name = name(id, provider.name(), token.field());
        String host = token.field().equals("access_token") && !provider.apiHosts().isEmpty()
                ? provider.apiHosts().get(0) : provider.tokenHosts().get(0);
        try {
            SecretStore s = store.get();
            s.set(new SecretSpec(name, host, 443, null, null, Instant.now(), s.defaultStore()), token.real());
            Map<String, JsonNode> all = read(id);
            ObjectNode entry = JSON.createObjectNode().put("provider", provider.name()).put("field", token.field())
                    .put("placeholder", token.placeholder());
            all.put(name, entry);
            write(id, all);
        } catch (KosaException | IllegalArgumentException | IOException e) {
            log.accept("sandbox " + id + ": the " + provider.name() + " login's " + token.field()
                    + " is held by the broker only, not kept: " + e.getMessage());
        }
    }

    /** Removes a removed sandbox's tokens from the store. */
    void forget(String id) {
        writer.execute(() -> {
            try {
                SecretStore s = store.get();
                for (SecretSpec spec : s.list()) {
                    if (spec.name().startsWith(PREFIX + id + "_")) {
                        s.remove(spec.name());
                    }
                }
            } catch (KosaException e) {
                log.accept("sandbox " + id + ": its login tokens stay in the secret store (" + e.getMessage()
                        + "); remove them with `kosa8 secret rm " + PREFIX + id + "_…`");
            }
        });
    }

    /** Waits for the writes asked so far. */
    void settle() throws Exception {
        writer.submit(() -> { }).get(30, java.util.concurrent.TimeUnit.SECONDS);
    }

    private Map<String, JsonNode> read(String id) {
        Path f = layout.logins(id);
        Map<String, JsonNode> r = new LinkedHashMap<>();
        if (!Files.exists(f)) {
            return r;
        }
        try {
            JSON.readTree(f.toFile()).properties().forEach(e -> r.put(e.getKey(), e.getValue()));
        } catch (IOException e) {
            log.accept("sandbox " + id + ": cannot read " + f + " (" + e.getMessage() + "); its logins are forgotten");
        }
        return r;
    }

    private void write(String id, Map<String, JsonNode> all) throws IOException {
        Path f = layout.logins(id);
        if (!Files.isDirectory(f.getParent())) {
            return; // removed meanwhile
        }
        Path tmp = f.resolveSibling(f.getFileName() + ".tmp");
        ObjectNode root = JSON.createObjectNode();
        all.forEach(root::set);
        Files.write(tmp, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(root));
        try (var ch = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.WRITE)) {
            ch.force(true);
        }
        Files.move(tmp, f, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
