package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Address blocks and the exceptions that name them: what they cover, and what they refuse to be. */
class AddressExceptionTest {

    @Test
    void aBlockCoversItsAddressesAndNoOthersInBothFamilies() throws Exception {
        AddressRange doc = AddressRange.parse("203.0.113.0/24");
        assertThat(doc.contains(InetAddress.getByName("203.0.113.80"))).isTrue();
        assertThat(doc.contains(InetAddress.getByName("203.0.114.1"))).isFalse();
        assertThat(doc.contains(InetAddress.getByName("::ffff:203.0.113.7"))).as("IPv4-mapped").isTrue();
        assertThat(doc.contains(InetAddress.getByName("2001:db8::1"))).isFalse();
        AddressRange one = AddressRange.parse("10.1.2.3");
        assertThat(one).isEqualTo(AddressRange.parse("10.1.2.3/32"));
        assertThat(one.contains(InetAddress.getByName("10.1.2.3"))).isTrue();
        assertThat(one.contains(InetAddress.getByName("10.1.2.4"))).isFalse();
        AddressRange v6 = AddressRange.parse("fd00:1::/48");
        assertThat(v6.contains(InetAddress.getByName("fd00:1:0:ffff::2"))).isTrue();
        assertThat(v6.contains(InetAddress.getByName("fd00:2::2"))).isFalse();
        assertThat(AddressRange.parse("172.16.0.0/12").contains(InetAddress.getByName("172.31.255.255"))).isTrue();
        assertThat(doc).hasToString("203.0.113.0/24");
        assertThat(v6).hasToString("fd00:1::/48");
        assertThat(AddressRange.parse("::1")).hasToString("::1/128");
    }

    @Test
    void aBlanketBlockANameOrBitsPastThePrefixAreRefusedSayingWhatToWrite() {
        assertThatThrownBy(() -> AddressRange.parse("0.0.0.0/0")).hasMessageContaining("wider than /8");
        assertThatThrownBy(() -> AddressRange.parse("10.0.0.0/7")).hasMessageContaining("wider than /8");
        assertThatThrownBy(() -> AddressRange.parse("::/0")).hasMessageContaining("wider than /7");
        assertThatThrownBy(() -> AddressRange.parse("203.0.113.5/24")).hasMessageContaining("write 203.0.113.0/24");
        assertThatThrownBy(() -> AddressRange.parse("mirror.example/24")).hasMessageContaining("not an address block");
        assertThatThrownBy(() -> AddressRange.parse("10.0.0.0/33")).hasMessageContaining("0 to 32");
        assertThatThrownBy(() -> AddressRange.parse("10.0.0.0/")).hasMessageContaining("no prefix length");
        assertThat(AddressRange.parse("10.0.0.0/8").prefix()).isEqualTo(8);
        assertThat(AddressRange.parse("fc00::/7").prefix()).isEqualTo(7);
    }

    @Test
    void anExceptionCoversItsNamesOnlyAndNeverAPort() throws Exception {
        AddressException exact = AddressException.parse("deb.debian.org", List.of("203.0.113.0/24"));
        InetAddress a = InetAddress.getByName("203.0.113.80");
        assertThat(exact.covering("deb.debian.org", a)).isPresent();
        assertThat(exact.covering("security.debian.org", a)).isEmpty();
        assertThat(exact.covering("deb.debian.org", InetAddress.getByName("10.0.0.1"))).isEmpty();
        AddressException wild = AddressException.parse("*.corp.example", List.of("10.20.0.0/16", "fd00:1::/48"));
        assertThat(wild.covering("git.corp.example", InetAddress.getByName("10.20.3.4"))).isPresent();
        assertThat(wild.covering("corp.example", InetAddress.getByName("10.20.3.4"))).as("not the suffix itself")
                .isEmpty();
        assertThat(wild).hasToString("*.corp.example -> 10.20.0.0/16, fd00:1::/48");
        assertThatThrownBy(() -> AddressException.parse("mirror.example:8080", List.of("10.0.0.0/8")))
                .hasMessageContaining("names a port");
        assertThatThrownBy(() -> AddressException.parse("10.0.0.1", List.of("10.0.0.0/8")))
                .hasMessageContaining("IP address");
        assertThatThrownBy(() -> AddressException.parse("*.com", List.of("10.0.0.0/8")))
                .hasMessageContaining("top-level domain");
        assertThatThrownBy(() -> AddressException.parse("mirror.example", List.of()))
                .hasMessageContaining("names no address block");
    }
}
