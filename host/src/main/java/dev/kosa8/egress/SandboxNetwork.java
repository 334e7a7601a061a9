package dev.kosa8.egress;

import java.util.ArrayList;
import java.util.List;

/**
 * A sandbox's network settings as the daemon keeps them on disk: the mode and
 * the allow-list, as the user wrote its rules (presets already expanded).
 *
 * @param trustHostCas the guest trusts the host's locally added CAs ({@code --trust-host-cas}), and so does its
 *                     broker when it verifies an upstream; records from before it load as false
 */
public record SandboxNetwork(NetMode mode, List<String> allow,
                             @com.fasterxml.jackson.annotation.JsonInclude(
                                     com.fasterxml.jackson.annotation.JsonInclude.Include.NON_DEFAULT)
                             boolean trustHostCas) {
    /** Sandboxes recorded before networks existed had no network device. */
    public static final SandboxNetwork NONE = new SandboxNetwork(NetMode.NONE, List.of());

    public SandboxNetwork {
        mode = mode == null ? NetMode.NONE : mode;
        allow = allow == null ? List.of() : List.copyOf(allow);
    }

    public SandboxNetwork(NetMode mode, List<String> allow) {
        this(mode, allow, false);
    }

    public SandboxNetwork trustingHostCas(boolean trust) {
        return new SandboxNetwork(mode, allow, trust);
    }

    public EgressPolicy policy() {
        return new EgressPolicy(mode == NetMode.OPEN, allow.stream().map(AllowRule::parse).toList());
    }

    public SandboxNetwork allowing(List<AllowRule> rules) {
        EgressPolicy p = policy();
        for (AllowRule r : rules) {
            p = p.allowing(r);
        }
        return of(mode, p, trustHostCas);
    }

    /**
     * Takes a host's rules off the list. Refused on an open network: every host
     * is allowed there whatever the list says, so a deny that went through
     * would tell the user a host is closed while it is still reachable.
     */
    public SandboxNetwork denying(HostPattern pattern) {
        if (mode == NetMode.OPEN) {
            throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.STATE,
                    "the network is open (--net open): every host is allowed, so denying " + pattern
                            + " would close nothing",
                    "create the sandbox without --net open, with --allow for each host it needs");
        }
        return of(mode, policy().denying(pattern), trustHostCas);
    }

    private static SandboxNetwork of(NetMode mode, EgressPolicy p, boolean trustHostCas) {
        List<String> rules = new ArrayList<>();
        p.rules().forEach(r -> rules.add(r.toString()));
        return new SandboxNetwork(mode, rules, trustHostCas);
    }
}
