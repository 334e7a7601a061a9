package dev.kosa8.egress;

import java.util.ArrayList;
import java.util.List;

/**
 * A sandbox's network settings as the daemon keeps them on disk: the mode and
 * the allow-list, as the user wrote its rules (presets already expanded).
 */
public record SandboxNetwork(NetMode mode, List<String> allow) {
    /** Sandboxes recorded before networks existed had no network device. */
    public static final SandboxNetwork NONE = new SandboxNetwork(NetMode.NONE, List.of());

    public SandboxNetwork {
        mode = mode == null ? NetMode.NONE : mode;
        allow = allow == null ? List.of() : List.copyOf(allow);
    }

    public EgressPolicy policy() {
        return new EgressPolicy(mode == NetMode.OPEN, allow.stream().map(AllowRule::parse).toList());
    }

    public SandboxNetwork allowing(List<AllowRule> rules) {
        EgressPolicy p = policy();
        for (AllowRule r : rules) {
            p = p.allowing(r);
        }
        return of(mode, p);
    }

    public SandboxNetwork denying(HostPattern pattern) {
        return of(mode, policy().denying(pattern));
    }

    private static SandboxNetwork of(NetMode mode, EgressPolicy p) {
        List<String> rules = new ArrayList<>();
        p.rules().forEach(r -> rules.add(r.toString()));
        return new SandboxNetwork(mode, rules);
    }
}
