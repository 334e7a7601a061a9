package dev.kosa8.mcp;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class McpPolicyTest {
    private final McpPolicy configured = new McpPolicy(false, List.of("pypi.org", "@npm"), List.of("openai"), "closed");
    private final McpPolicy open = new McpPolicy(true, List.of(), List.of(), "closed");

    @Test
    void whatTheUserConfiguredMayBeAskedForAndNothingBeyond() {
        assertThatCode(() -> configured.checkAllow(List.of("pypi.org"))).doesNotThrowAnyException();
        assertThatCode(() -> configured.checkSecrets(List.of("openai"))).doesNotThrowAnyException();
        assertThatThrownBy(() -> configured.checkAllow(List.of("pypi.org", "evil.example")))
                .isInstanceOf(ToolError.class).hasMessageContaining("'evil.example' goes beyond")
                .hasMessageContaining("allowed: pypi.org, @npm")
                .extracting(e -> ((ToolError) e).suggestion()).asString().contains("--allow-policy-changes");
        assertThatThrownBy(() -> configured.checkSecrets(List.of("github"))).hasMessageContaining("secret 'github'");
    }

    @Test
    void aNetworkMoreOpenThanConfiguredIsRefusedAndALessOpenOneIsNot() {
        assertThatThrownBy(() -> configured.checkNet("open")).hasMessageContaining("more open");
        assertThatCode(() -> configured.checkNet("none")).doesNotThrowAnyException();
        assertThatCode(() -> configured.checkNet("closed")).doesNotThrowAnyException();
        assertThatCode(() -> configured.checkNet(null)).doesNotThrowAnyException();
    }

    @Test
    void withPolicyChangesAllowedAnythingMayBeAskedFor() {
        assertThatCode(() -> {
            open.checkAllow(List.of("anything.example"));
            open.checkSecrets(List.of("any"));
            open.checkNet("open");
        }).doesNotThrowAnyException();
    }
}
