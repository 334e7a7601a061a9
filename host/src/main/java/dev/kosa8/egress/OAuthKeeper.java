package dev.kosa8.egress;

import dev.kosa8.secrets.TokenResponses;

/**
 * Where a broker hands the real tokens of a login made inside its sandbox, to
 * be kept on the host (the daemon's {@code SandboxLogins}, in the secret
 * store). Called on the broker's event loop: it must not block.
 */
public interface OAuthKeeper {
    OAuthKeeper NONE = (provider, token) -> { };

    /** {@code token} is the newest of its field for {@code provider} in this sandbox. */
    void kept(dev.kosa8.secrets.OAuthProvider provider, TokenResponses.Token token);
}
