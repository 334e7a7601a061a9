package dev.kosa8.mcp;

import java.util.List;

/**
 * What an MCP client may change of a sandbox's network and secrets. The user's configuration (the project's
 * {@code .kosa8/config.toml} where {@code kosa8 mcp} runs) is what a client may ask for; anything beyond it, or
 * changing a running sandbox's allow-list or secrets at all, needs {@code kosa8 mcp --allow-policy-changes}.
 *
 * @param allowPolicyChanges the user started the server with {@code --allow-policy-changes}
 * @param configuredAllow    the allow rules of the user's configuration
 * @param configuredSecrets  the secrets (names) of the user's configuration
 * @param configuredNet      the network mode of the user's configuration ({@code closed} by default)
 */
public record McpPolicy(boolean allowPolicyChanges, List<String> configuredAllow, List<String> configuredSecrets,
                        String configuredNet) {
    public McpPolicy {
        configuredAllow = List.copyOf(configuredAllow);
        configuredSecrets = List.copyOf(configuredSecrets);
        configuredNet = configuredNet == null || configuredNet.isEmpty() ? "closed" : configuredNet;
    }

    static final String HOW = "the user can start the server with `kosa8 mcp --allow-policy-changes`, or add it to"
            + " the project's .kosa8/config.toml";

    /** Refuses allow rules beyond the configured ones, unless policy changes are allowed. */
    void checkAllow(List<String> rules) {
        if (allowPolicyChanges) {
            return;
        }
        for (String r : rules) {
            if (!configuredAllow.contains(r)) {
                throw new ToolError("allowing '" + r + "' goes beyond the user's configuration (allowed: "
                        + (configuredAllow.isEmpty() ? "none" : String.join(", ", configuredAllow))
                        + ") and this server does not make policy changes", HOW);
            }
        }
    }

    /** Refuses secrets beyond the configured ones, unless policy changes are allowed. */
    void checkSecrets(List<String> names) {
        if (allowPolicyChanges) {
            return;
        }
        for (String n : names) {
            if (!configuredSecrets.contains(n)) {
                throw new ToolError("granting secret '" + n + "' goes beyond the user's configuration (secrets: "
                        + (configuredSecrets.isEmpty() ? "none" : String.join(", ", configuredSecrets))
                        + ") and this server does not make policy changes", HOW);
            }
        }
    }

    /** Refuses a network mode more open than the configured one, unless policy changes are allowed. */
    void checkNet(String net) {
        if (net == null || allowPolicyChanges || net.equals(configuredNet)) {
            return;
        }
        if (rank(net) > rank(configuredNet)) {
            throw new ToolError("network mode '" + net + "' is more open than the user's configuration ('"
                    + configuredNet + "') and this server does not make policy changes", HOW);
        }
    }

    private static int rank(String net) {
        return switch (net) {
            case "none" -> 0;
            case "closed" -> 1;
            default -> 2;
        };
    }
}
