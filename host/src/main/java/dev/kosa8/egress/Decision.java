package dev.kosa8.egress;

/**
 * What the policy says about one connection or request, and why, in words the
 * audit log and the agent both read.
 *
 * @param intercept for an allowed TLS connection: whether the broker must read
 *                  the requests inside it (method and path rules, bound keys)
 */
public record Decision(boolean allowed, String reason, boolean intercept) {

    public static Decision allow(String reason) {
        return new Decision(true, reason, false);
    }

    public static Decision deny(String reason) {
        return new Decision(false, reason, false);
    }
}
