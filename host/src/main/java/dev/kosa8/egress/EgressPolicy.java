package dev.kosa8.egress;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A sandbox's network policy: deny by default, allow what a rule names. A
 * pure function from a request to a {@link Decision}; the broker's pipeline
 * only applies it. A value: changing the policy of a running sandbox swaps in
 * a new one.
 *
 * @param open       every host allowed ({@code --net open}, asked for explicitly);
 *                   the broker still checks addresses and logs every connection
 * @param exceptions the user's address exceptions: which names may be dialed at
 *                   addresses the address check refuses by default (host-side
 *                   settings, never the guest's; see {@link NetworkSettings})
 */
public record EgressPolicy(boolean open, List<AllowRule> rules, AddressExceptions exceptions) {
    public static final EgressPolicy DENY_ALL = new EgressPolicy(false, List.of());

    public EgressPolicy {
        rules = List.copyOf(rules);
        exceptions = exceptions == null ? AddressExceptions.NONE : exceptions;
    }

    public EgressPolicy(boolean open, List<AllowRule> rules) {
        this(open, rules, AddressExceptions.NONE);
    }

    /** The same rules with these address exceptions. */
    public EgressPolicy withExceptions(AddressExceptions next) {
        return new EgressPolicy(open, rules, next);
    }

    /**
     * May the broker dial {@code a}, the address it resolved the allowed name
     * {@code host} to? Public unicast addresses yes; those {@link AddressFilter}
     * refuses only when an address exception names the host and a block
     * holding the address, and the reason then says which. One of this
     * machine's own addresses never, exception or not: a name pointed at the
     * host reaches whatever listens on it.
     *
     * @param ofThisHost whether {@code a} is one of this machine's own addresses (loopback aside, which the
     *                   address filter judges), as the caller found out
     */
    public Decision address(String host, InetAddress a, boolean ofThisHost) {
        if (ofThisHost) {
            return Decision.deny("an address of this host");
        }
        String refused = AddressFilter.refusal(a);
        if (refused == null) {
            return Decision.allow("a public address");
        }
        Optional<AddressExceptions.Match> m = exceptions.covering(host, a);
        if (m.isPresent()) {
            return Decision.allow(a.getHostAddress() + " is " + refused + ", dialed by the address exception "
                    + m.get().exception());
        }
        return Decision.deny(refused);
    }

    /**
     * May the guest connect to this host and port? Names only; addresses are the resolver's check. An allowed
     * connection is intercepted unless a {@code passthrough} rule names the host: that rule wins over the others
     * for the host, as an unrestricted rule wins over one with methods or a path.
     */
    public Decision connect(String host, int port) {
        AllowRule passthrough = null;
        AllowRule unrestricted = null;
        AllowRule restricted = null;
        for (AllowRule r : rules) {
            if (r.host().matches(host, port)) {
                if (r.passthrough()) {
                    passthrough = passthrough == null ? r : passthrough;
                } else if (!r.hasRequestRules()) {
                    unrestricted = unrestricted == null ? r : unrestricted;
                } else {
                    restricted = restricted == null ? r : restricted;
                }
            }
        }
        if (passthrough != null) {
            return new Decision(true, (open ? "the network is open; " : "allowed by ") + passthrough, true, false);
        }
        if (open) {
            return Decision.allow("the network is open");
        }
        if (unrestricted != null) {
            return Decision.allow("allowed by " + unrestricted);
        }
        if (restricted != null) {
            return new Decision(true, "allowed for some requests by " + restricted, false, true);
        }
        return Decision.deny(denial(host, port));
    }

    /** May the guest send this HTTP request? {@code path} has no query. */
    public Decision request(String host, int port, String method, String path) {
        Decision c = connect(host, port);
        if (!c.allowed() || !c.requestRules()) {
            return c;
        }
        List<String> matching = new ArrayList<>();
        for (AllowRule r : rules) {
            if (r.host().matches(host, port) && !r.passthrough()) {
                if (r.allowsRequest(method, path)) {
                    return Decision.allow("allowed by " + r);
                }
                matching.add(r.toString());
            }
        }
        return Decision.deny(method + " " + path + " on " + host + " is outside the rules " + String.join("; ",
                matching));
    }

    /** Does the broker's DNS answer for this name? Any rule for the name, whatever its port. */
    public boolean answers(String host) {
        return open || rules.stream().anyMatch(r -> r.host().matchesName(host));
    }

    public EgressPolicy allowing(AllowRule rule) {
        List<AllowRule> next = new ArrayList<>(rules);
        next.removeIf(r -> r.equals(rule));
        next.add(rule);
        return new EgressPolicy(open, next, exceptions);
    }

    /** Removes every rule whose host pattern is {@code pattern}, whatever its methods, path or passthrough. */
    public EgressPolicy denying(HostPattern pattern) {
        List<AllowRule> next = new ArrayList<>(rules);
        next.removeIf(r -> r.host().equals(pattern));
        return new EgressPolicy(open, next, exceptions);
    }

    private static String denial(String host, int port) {
        return host + ":" + port + " is not on the sandbox's allow-list";
    }
}
