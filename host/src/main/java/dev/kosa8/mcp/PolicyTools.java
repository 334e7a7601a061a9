package dev.kosa8.mcp;

import java.util.ArrayList;
import java.util.List;

/**
 * network_policy (always), and the policy changes allow_host, deny_host and grant_secret, which exist only when
 * the user started the server with {@code --allow-policy-changes}.
 */
final class PolicyTools {
    private final McpBackend backend;
    private final McpPolicy policy;

    PolicyTools(McpBackend backend, McpPolicy policy) {
        this.backend = backend;
        this.policy = policy;
    }

    List<ToolDef> tools() {
        List<ToolDef> tools = new ArrayList<>();
        tools.add(new ToolDef("network_policy", """
                A sandbox's network policy: its mode (closed, open, none), the hosts it may reach and the \
                secrets it holds placeholders of (names only; values are never shown).""",
                Schema.object().sandbox(), (a, c) -> backend.network(a.sandbox())));
        if (!policy.allowPolicyChanges()) {
            return tools;
        }
        tools.add(new ToolDef("allow_host", """
                Let a running sandbox reach more hosts, at once: names (pypi.org), *.domain, name:port, or \
                presets (@pypi, @npm, @github). Without a port a rule covers 80 and 443.""",
                Schema.object().sandbox().strings("rules", "The rules to add.", true),
                (a, c) -> {
                    String sandbox = a.sandbox();
                    List<String> rules = a.texts("rules");
                    if (rules.isEmpty()) {
                        throw new ToolError("allow_host needs at least one rule", "like rules: [\"pypi.org\"]");
                    }
                    return backend.allow(sandbox, rules);
                }));
        tools.add(new ToolDef("deny_host", """
                Remove every allow rule for a host pattern from a sandbox and close its open connections to it.""",
                Schema.object().sandbox().string("host", "The host pattern as allowed, like pypi.org.", 256, true),
                (a, c) -> backend.deny(a.sandbox(), a.text("host", 256))));
        tools.add(new ToolDef("grant_secret", """
                Give a running sandbox a secret from the user's store, by name: commands see a placeholder in \
                its variable and the network broker puts the real value into HTTPS requests to the secret's \
                host alone. The value is never shown.""",
                Schema.object().sandbox().string("name", "The secret's name, as `kosa8 secret ls` shows it.", 128,
                        true),
                (a, c) -> backend.grantSecret(a.sandbox(), a.text("name", 128))));
        return tools;
    }
}
