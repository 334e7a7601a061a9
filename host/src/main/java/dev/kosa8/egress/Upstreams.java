package dev.kosa8.egress;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;

/**
 * Resolves an allowed name to the one address the broker will dial, on the
 * host, never trusting the guest's idea of where a name points. Every address
 * passes {@link AddressFilter} — even for allowed names — except the
 * loopback servers a test maps names to ({@link EgressTestSettings}).
 */
public final class Upstreams {
    /** Looks a name up; the system resolver in production. */
    @FunctionalInterface
    public interface NameLookup {
        InetAddress[] lookup(String host) throws UnknownHostException;
    }

    /**
     * Where to dial, and what the audit log says about it.
     *
     * @param exception null, or why an address the check refuses by default was dialed (the address exception that
     *                  applied), which the connection's audit line carries in its reason
     */
    public record Target(InetSocketAddress address, String via, String exception) {
        public Target(InetSocketAddress address, String via) {
            this(address, via, null);
        }

        /** The policy's reason for the connection, with the address exception that applied, if one did. */
        public String reason(String policyReason) {
            return exception == null ? policyReason : policyReason + "; " + exception;
        }
    }

    /**
     * The name cannot be dialed: it resolves only to addresses the broker refuses (a rule the guest hit), or, when
     * {@code unresolved}, the host's resolver found no address for it or the lookup itself failed (the outside
     * world's failure, not a rule's: the guest's answer must not send its user to {@code kosa8 allow} for a host
     * that is already allowed).
     */
    public static final class Refused extends Exception {
        private final boolean unresolved;

        public Refused(String reason) {
            this(reason, false);
        }

        Refused(String reason, boolean unresolved) {
            super(reason, null, false, false);
            this.unresolved = unresolved;
        }

        public boolean unresolved() {
            return unresolved;
        }
    }

    private static final Executor LOOKUPS = Executors.newVirtualThreadPerTaskExecutor();

    private final NameLookup lookup;
    private final EgressTestSettings test;

    public Upstreams(NameLookup lookup, EgressTestSettings test) {
        this.lookup = lookup;
        this.test = test;
    }

    public static Upstreams system(EgressTestSettings test) {
        return new Upstreams(InetAddress::getAllByName, test);
    }

    /**
     * Why a {@link #resolveAsync} failed: its {@link Refused}, or any other failure of the lookup as one of the
     * outside world's ({@link Refused#unresolved()}), so every entry point answers lookups alike.
     */
    public static Refused refusal(Throwable failure) {
        Throwable c = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        return c instanceof Refused r ? r : new Refused("looking up the name failed: " + c, true);
    }

    /** Resolves off the caller's thread (lookups block); a failure is read with {@link #refusal}. */
    public CompletableFuture<Target> resolveAsync(String host, int port, EgressPolicy policy) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return resolve(host, port, policy);
            } catch (Refused e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        }, LOOKUPS);
    }

    private static boolean isThisHost(InetAddress a) {
        try {
            return java.net.NetworkInterface.getByInetAddress(a) != null;
        } catch (java.net.SocketException e) {
            return true; // cannot tell: refuse
        }
    }

    /** As {@link #resolve(String, int, EgressPolicy)} with no address exceptions. */
    public Target resolve(String host, int port) throws Refused {
        return resolve(host, port, EgressPolicy.DENY_ALL);
    }

    /**
     * The address to dial for {@code host}: the first one the lookup gave that {@code policy} lets the broker dial
     * ({@link EgressPolicy#address}: public, or covered by one of its address exceptions).
     */
    public Target resolve(String host, int port, EgressPolicy policy) throws Refused {
        Integer mapped = test.loopback().get(host + ":" + port);
        if (mapped != null) {
            return new Target(new InetSocketAddress(InetAddress.getLoopbackAddress(), mapped), "test loopback");
        }
        InetAddress[] all;
        String forced = test.resolve().get(host);
        try {
            all = forced != null ? new InetAddress[] {InetAddress.getByName(forced)} : lookup.lookup(host);
        } catch (UnknownHostException e) {
            // the JDK's message names the resolver's answer ("Name or service not known", "Temporary failure in
            // name resolution"), which tells a typo from a host that is offline
            String cause = e.getMessage() == null ? "" : e.getMessage().replace(host + ": ", "");
            throw new Refused(host + " does not resolve" + (cause.isBlank() || cause.equals(host) ? "" : " (" + cause
                    + ")"), true);
        }
        List<String> refused = new ArrayList<>();
        for (InetAddress a : all) {
            // the host's own addresses (loopback aside) come first: even a public one reaches what listens on it
            Decision d = policy.address(host, a, !a.isLoopbackAddress() && isThisHost(a));
            if (d.allowed()) {
                boolean excepted = AddressFilter.refusal(a) != null;
                return new Target(new InetSocketAddress(a, port), a.getHostAddress(), excepted ? d.reason() : null);
            }
            refused.add(a.getHostAddress() + " (" + d.reason() + ")");
        }
        throw new Refused(host + " resolves only to addresses the broker refuses: " + String.join(", ", refused));
    }
}
