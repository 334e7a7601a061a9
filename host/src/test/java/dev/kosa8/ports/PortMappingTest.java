package dev.kosa8.ports;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import org.junit.jupiter.api.Test;

class PortMappingTest {
    @Test
    void aGuestPortAloneIsPublishedOnTheHostsLoopbackOnAnyFreePort() {
        assertThat(PortMapping.parse("8000")).isEqualTo(new PortMapping(8000, "127.0.0.1", 0));
        assertThat(PortMapping.parse("8000").loopbackOnly()).isTrue();
    }

    @Test
    void hostAndGuestPortsAndAnAddressTheUserNames() {
        assertThat(PortMapping.parse("8080:80")).isEqualTo(new PortMapping(80, "127.0.0.1", 8080));
        assertThat(PortMapping.parse("0.0.0.0:8080:80")).isEqualTo(new PortMapping(80, "0.0.0.0", 8080));
        assertThat(PortMapping.parse("0.0.0.0:8080:80").loopbackOnly()).isFalse();
        assertThat(PortMapping.parse("[::1]:8080:80")).isEqualTo(new PortMapping(80, "::1", 8080));
        assertThat(PortMapping.parse("[::1]:8080:80").loopbackOnly()).isTrue();
        assertThat(PortMapping.parse("0:80").hostPort()).isZero();
        assertThat(new PortMapping(80, "::1", 8080)).hasToString("[::1]:8080->80");
    }

    @Test
    void whatCannotBeReadSaysWhichFormsThereAre() {
        for (String bad : new String[] {"", "x", "80:", ":80", "1:2:3:4", "99999", "0", "localhost:8080:80",
                "[::1]:80", "256.1.1.1:1:2", "-1"}) {
            assertThatThrownBy(() -> PortMapping.parse(bad)).as(bad).isInstanceOf(KosaException.class)
                    .satisfies(e -> assertThat(((KosaException) e).kind()).isEqualTo(KosaException.Kind.USAGE))
                    .satisfies(e -> assertThat(((KosaException) e).suggestion() + e.getMessage())
                            .containsAnyOf("HOST:GUEST", "1..65535", "IP address"));
        }
    }
}
