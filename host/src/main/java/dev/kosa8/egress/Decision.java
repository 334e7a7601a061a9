package dev.kosa8.egress;

/**
 * What the policy says about one connection or request, and why, in words the
 * audit log and the agent both read.
 *
 * @param passthrough  for an allowed TLS connection: relay it unread, because a rule names the host
 *                     {@code passthrough}; otherwise (the default) the broker terminates it and reads every request
 * @param requestRules the host's rules judge each request's method and path
 */
public record Decision(boolean allowed, String reason, boolean passthrough, boolean requestRules) {

    /** Allowed, and every request inside is read and carried by the broker. */
    public static Decision allow(String reason) {
        return new Decision(true, reason, false, false);
    }

    public static Decision deny(String reason) {
        return new Decision(false, reason, false, false);
    }

    /** TLS is terminated by the broker: every allowed connection but a passthrough one. */
    public boolean intercept() {
        return allowed && !passthrough;
    }
}
