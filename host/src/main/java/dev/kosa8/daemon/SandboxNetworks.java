package dev.kosa8.daemon;

import dev.kosa8.egress.Broker;
import dev.kosa8.egress.EgressService;
import dev.kosa8.egress.HostPattern;
import dev.kosa8.egress.NetMode;
import dev.kosa8.egress.SandboxNetwork;
import dev.kosa8.egress.tls.HostCas;
import dev.kosa8.host.KosaException;
import dev.kosa8.secrets.GrantedSecret;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The closed network and the keys kept outside, per sandbox: its allow-list
 * and secrets as its record keeps them, and its broker, which applies both
 * while the machine runs. Every change is saved and reaches a running broker
 * at once.
 */
public final class SandboxNetworks {
    private final EgressService egress;
    private final SandboxSecrets secrets;
    private final SandboxStore store;
    private final SandboxRegistry registry;
    private final SandboxLayout layout;
    private final java.util.function.Consumer<String> log;
    private final SandboxLogins logins;

    SandboxNetworks(EgressService egress, SandboxSecrets secrets, SandboxStore store, SandboxRegistry registry,
                    SandboxLayout layout, java.util.function.Consumer<String> log) {
        this.log = log;
        this.logins = new SandboxLogins(secrets::store, layout, log, dev.kosa8.secrets.OAuthProviders.builtIn());
        this.egress = egress;
        this.secrets = secrets;
        this.store = store;
        this.registry = registry;
        this.layout = layout;
    }

    /** A new sandbox's secrets: each named one with a fresh placeholder. */
    List<GrantedSecret> grantNew(List<String> names) {
        return secrets.grant(List.of(), names);
    }

    /**
     * A new sandbox's network: {@code mode}, the rules given (presets expanded), each secret's host, and whether it
     * trusts the host's CAs ({@code trustHostCas}, or when not given the user's setting).
     */
    SandboxNetwork network(NetMode mode, List<String> allow, List<GrantedSecret> granted, Boolean trustHostCas) {
        boolean trust = trustHostCas != null ? trustHostCas : egress.settings().trustHostCas();
        return new SandboxNetwork(mode, List.of(), trust && mode != NetMode.NONE)
                .allowing(egress.presets().expand(allow)).allowing(secrets.allowRules(granted));
    }

    /** The user's network settings as they are now ({@code kosa8 net}). */
    public dev.kosa8.egress.NetworkSettings settings() {
        return egress.settings();
    }

    /**
     * The host's CAs a sandbox's guest trusts besides its own CA: the host's locally added ones when its network
     * trusts them, else none. A file that cannot be read is said in the daemon's log and left out.
     */
    HostCas hostCas(SandboxRecord r) {
        if (!r.network().trustHostCas() || r.network().mode() == NetMode.NONE) {
            return HostCas.NONE;
        }
        HostCas cas = egress.settings().hostCas();
        cas.problems().forEach(p -> log.accept("sandbox " + r.id() + ": a host CA file is left out: " + p));
        if (cas.isEmpty()) {
            log.accept("sandbox " + r.id() + ": --trust-host-cas, but " + cas.describe());
        }
        return cas;
    }

    /** Refuses a new sandbox that would share a folder holding kosa8's network or test settings. */
    void refuseSettingsIn(String workspace) {
        if (workspace != null && !workspace.isEmpty()) {
            egress.refuseInNewWorkspace(Path.of(workspace));
        }
    }

    /** Starts the broker of a sandbox about to run, with its policy and its secrets' values. */
    Broker startBroker(SandboxRecord r) {
        // every sandbox's folder, running or not: any guest may write its own, and test settings read from one
        // would let it open a network for itself
        Map<String, Path> workspaces = new HashMap<>();
        for (Sandbox other : registry.all()) {
            String w = other.record().workspace();
            if (w != null && !w.isEmpty()) {
                workspaces.put(other.id(), Path.of(w));
            }
        }
        if (r.workspace() != null && !r.workspace().isEmpty()) {
            workspaces.put(r.id(), Path.of(r.workspace()));
        }
        Broker b = egress.start(r.id(), layout.runtime(r.id()), layout.directory(r.id()), r.network(), workspaces);
        b.secrets(secrets.bindings(r));
        logins.attach(r.id(), b);
        return b;
    }

    /** A removed sandbox's login tokens leave the secret store. */
    void forgetLogins(String id) {
        logins.forget(id);
    }

    /** Adds rules (presets expanded) to a sandbox's allow-list; a running sandbox's broker applies them at once. */
    public SandboxNetwork allow(Sandbox s, List<String> rules) {
        return changeNetwork(s, n -> n.allowing(egress.presets().expand(rules)));
    }

    /** Removes every rule for a host pattern; open connections to it are closed. */
    public SandboxNetwork deny(Sandbox s, String pattern) {
        HostPattern p;
        try {
            p = HostPattern.parse(pattern);
        } catch (IllegalArgumentException e) {
            throw new KosaException(KosaException.Kind.USAGE, "bad host '" + pattern + "': " + e.getMessage(),
                    "name a host or *.domain as it appears in `kosa8 net " + s.id() + "`");
        }
        SandboxNetwork before = s.record().network();
        SandboxNetwork after = changeNetwork(s, n -> n.denying(p));
        if (after.equals(before)) {
            throw new KosaException(KosaException.Kind.USAGE, pattern + " is not on the allow-list of sandbox " + s.id(),
                    "`kosa8 net " + s.id() + "` shows the list");
        }
        return after;
    }

    private SandboxNetwork changeNetwork(Sandbox s, UnaryOperator<SandboxNetwork> change) {
        return s.locked(() -> {
            SandboxRecord r = s.record();
            if (r.network().mode() == NetMode.NONE) {
                throw new KosaException(KosaException.Kind.STATE, "sandbox " + s.id() + " has no network",
                        "create a sandbox without --net none to give it one");
            }
            SandboxNetwork next = change.apply(r.network());
            s.record(r.withNetwork(next));
            store.save(s.record());
            Broker b = s.broker();
            if (b != null) {
                b.policy(egress.policy(next));
            }
            return next;
        });
    }

    /**
     * Gives a sandbox more secrets: each host joins its allow-list, and a
     * running sandbox's broker puts the key into requests at once; the guest
     * sees the placeholder in the environment of the commands it runs from now.
     */
    public List<GrantedSecret> grant(Sandbox s, List<String> names) {
        return s.locked(() -> {
            SandboxRecord r = s.record();
            if (r.network().mode() == NetMode.NONE) {
                throw new KosaException(KosaException.Kind.STATE, "sandbox " + s.id() + " has no network, so no key "
                        + "can be put into its requests", "create a sandbox without --net none to give it secrets");
            }
            List<GrantedSecret> next = secrets.grant(r.secrets(), names);
            apply(s, r.withSecrets(next).withNetwork(r.network().allowing(secrets.allowRules(next))));
            return next;
        });
    }

    /**
     * Takes secrets away: the broker stops putting them into requests at
     * once, and their placeholders leave the environment of new commands.
     * Their hosts stay on the allow-list (`kosa8 deny` closes them).
     */
    public List<GrantedSecret> revoke(Sandbox s, List<String> names) {
        return s.locked(() -> {
            SandboxRecord r = s.record();
            List<GrantedSecret> next = SandboxSecrets.revoke(s.id(), r.secrets(), names);
            apply(s, r.withSecrets(next));
            return next;
        });
    }

    /** After `kosa8 secret set` changed a value: every running broker takes the new one. */
    public void reloadSecrets() {
        for (Sandbox s : registry.all()) {
            Broker b = s.broker();
            if (b != null && !s.record().secrets().isEmpty()) {
                b.secrets(secrets.bindings(s.record()));
            }
        }
    }

    private void apply(Sandbox s, SandboxRecord r) {
        s.record(r);
        store.save(r);
        Broker b = s.broker();
        if (b != null) {
            b.policy(egress.policy(r.network()));
            b.secrets(secrets.bindings(r));
        }
    }

    /** What every command run in the sandbox gets in its environment: each secret's placeholder. */
    public Map<String, String> secretEnvironment(Sandbox s) {
        Map<String, String> env = new LinkedHashMap<>();
        for (GrantedSecret g : s.record().secrets()) {
            env.put(g.env(), g.sentinel());
        }
        return env;
    }

    /** The broker's audit log of a sandbox (`kosa8 net log`). */
    public Path auditLog(Sandbox s) {
        return layout.netLog(s.id());
    }
}
