package dev.kosa8.daemon;

import dev.kosa8.egress.AllowRule;
import dev.kosa8.egress.SecretBinding;
import dev.kosa8.egress.SecretBindings;
import dev.kosa8.host.KosaException;
import dev.kosa8.secrets.GrantedSecret;
import dev.kosa8.secrets.SecretSpec;
import dev.kosa8.secrets.SecretStore;
import dev.kosa8.secrets.Sentinels;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Between the host's secret store and the sandboxes: grants a secret to a
 * sandbox (drawing its placeholder), and gives each broker the real values of
 * its sandbox's secrets. The values are read from the store each time a broker
 * starts or a secret changes, and held only by brokers.
 */
final class SandboxSecrets {
    private final Supplier<SecretStore> store;
    private final Consumer<String> log;
    private final SecureRandom random = new SecureRandom();
    private SecretStore opened;

    SandboxSecrets(Supplier<SecretStore> store, Consumer<String> log) {
        this.store = store;
        this.log = log;
    }

    synchronized SecretStore store() {
        if (opened == null) {
            opened = store.get();
        }
        return opened;
    }

    /** {@code existing} plus each named secret not in it yet, with a fresh placeholder. */
    List<GrantedSecret> grant(List<GrantedSecret> existing, List<String> names) {
        List<GrantedSecret> next = new ArrayList<>(existing);
        for (String name : names) {
            if (next.stream().anyMatch(g -> g.name().equals(name))) {
                continue;
            }
            SecretSpec spec = store().spec(name).orElseThrow(() -> new KosaException(KosaException.Kind.USAGE,
                    "no secret '" + name + "' in this machine's secret store",
                    "store it first: kosa8 secret set " + name + " --host HOST (`kosa8 secret ls` lists them)"));
            for (GrantedSecret g : next) {
                if (g.env().equals(spec.env())) {
                    throw new KosaException(KosaException.Kind.USAGE, "secrets " + g.name() + " and " + name
                            + " both use the environment variable " + spec.env(),
                            "give one another variable: kosa8 secret set " + name + " --host " + spec.host()
                                    + " --env OTHER_NAME");
                }
            }
            String value = store().value(name);
            next.add(new GrantedSecret(name, spec.env(), Sentinels.mint(value, random)));
        }
        return List.copyOf(next);
    }

    static List<GrantedSecret> revoke(String sandboxId, List<GrantedSecret> existing, List<String> names) {
        List<GrantedSecret> next = new ArrayList<>(existing);
        for (String name : names) {
            if (!next.removeIf(g -> g.name().equals(name))) {
                throw new KosaException(KosaException.Kind.USAGE, "sandbox " + sandboxId + " has no secret '" + name
                        + "'", "`kosa8 inspect " + sandboxId + "` lists its secrets");
            }
        }
        return List.copyOf(next);
    }

    /** The allow-list rules that let each secret's host be reached. */
    List<AllowRule> allowRules(List<GrantedSecret> granted) {
        List<AllowRule> rules = new ArrayList<>();
        for (GrantedSecret g : granted) {
            spec(g).ifPresent(spec -> rules.add(AllowRule.parse(spec.port() == 443 ? spec.host()
                    : spec.host() + ":" + spec.port())));
        }
        return rules;
    }

    /**
     * The values a broker needs for this sandbox. A secret removed from the
     * store since it was granted is left out (its placeholder then reaches
     * nobody as a key), and said so in the daemon's log.
     */
    SecretBindings bindings(SandboxRecord r) {
        if (r.secrets().isEmpty()) {
            return SecretBindings.NONE;
        }
        List<SecretBinding> all = new ArrayList<>();
        for (GrantedSecret g : r.secrets()) {
            Optional<SecretSpec> spec = spec(g);
            if (spec.isEmpty()) {
                log.accept("sandbox " + r.id() + ": secret " + g.name() + " is no longer in the secret store; "
                        + "its requests go out without it");
                continue;
            }
            String value;
            try {
                value = store().value(g.name());
            } catch (KosaException e) {
                log.accept("sandbox " + r.id() + ": secret " + g.name() + ": " + e.getMessage());
                continue;
            }
            SecretSpec s = spec.get();
            all.add(new SecretBinding(g.name(), s.host(), s.port(), s.headerName(), s.headerValue("{}"), g.sentinel(),
                    value));
        }
        return new SecretBindings(all);
    }

    private Optional<SecretSpec> spec(GrantedSecret g) {
        return store().spec(g.name());
    }
}
