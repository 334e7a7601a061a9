package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.util.List;
import org.junit.jupiter.api.Test;

class SandboxNetworkTest {
    @Test
    void denyingOnAnOpenNetworkIsRefusedBecauseItWouldCloseNothing() {
        SandboxNetwork open = new SandboxNetwork(NetMode.OPEN, List.of("api.test"));
        assertThat(open.policy().connect("evil.test", 443).allowed()).isTrue();
        assertThatThrownBy(() -> open.denying(HostPattern.parse("evil.test")))
                .isInstanceOf(KosaException.class)
                .hasMessageContaining("open")
                .hasMessageContaining("evil.test")
                .hasMessageContaining("would close nothing");
        // a listed host too: the list means nothing while the network is open
        assertThatThrownBy(() -> open.denying(HostPattern.parse("api.test"))).isInstanceOf(KosaException.class);
    }

    @Test
    void denyingOnAClosedNetworkTakesTheHostsRulesOff() {
        SandboxNetwork closed = new SandboxNetwork(NetMode.CLOSED, List.of("api.test", "GET rules.test/hello"));
        SandboxNetwork after = closed.denying(HostPattern.parse("rules.test"));
        assertThat(after.allow()).containsExactly("api.test");
        assertThat(after.policy().connect("rules.test", 443).allowed()).isFalse();
        assertThat(after.policy().connect("api.test", 443).allowed()).isTrue();
    }
}
