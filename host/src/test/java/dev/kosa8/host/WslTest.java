package dev.kosa8.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class WslTest {
    @Test
    void microsoftsWsl2KernelIsWsl2() {
        Wsl w = Wsl.of("6.6.87.2-microsoft-standard-WSL2", Map.of("WSL_DISTRO_NAME", "Ubuntu-24.04"), false);
        assertThat(w.version()).isEqualTo(Wsl.Version.WSL2);
        assertThat(w.distribution()).isEqualTo("Ubuntu-24.04");
        assertThat(w.kvmGroupFix()).contains("wsl --terminate Ubuntu-24.04");
        assertThat(w.kvmMissingFix()).contains("nestedVirtualization=true").contains(".wslconfig")
                .contains("wsl --shutdown");
    }

    @Test
    void anOlderWsl2KernelNamedInLowerCaseIsWsl2() {
        assertThat(Wsl.of("5.15.133.1-microsoft-standard-wsl2", Map.of(), false).version()).isEqualTo(Wsl.Version.WSL2);
        assertThat(Wsl.of("4.19.104-microsoft-standard", Map.of(), false).version()).isEqualTo(Wsl.Version.WSL2);
    }

    @Test
    void wsl1ReportsAWindowsBuildAndCannotRunKosa8() {
        Wsl w = Wsl.of("4.4.0-19041-Microsoft", Map.of("WSL_DISTRO_NAME", "Debian"), false);
        assertThat(w.version()).isEqualTo(Wsl.Version.WSL1);
        assertThat(w.wsl1Fix()).contains("wsl --set-version Debian 2");
    }

    @Test
    void aWsl2DistributionOnAKernelOfItsOwnIsToldByItsEnvironment() {
        assertThat(Wsl.of("6.12.0-custom", Map.of("WSL_DISTRO_NAME", "Arch"), false).version()).isEqualTo(Wsl.Version.WSL2);
    }

    @Test
    void aWsl2UnderSudoIsToldByItsInteropHandler() {
        // sudo, ssh and services drop WSL_DISTRO_NAME; WSL's binfmt_misc handler is there for every process
        assertThat(Wsl.of("6.12.0-custom", Map.of(), true).version()).isEqualTo(Wsl.Version.WSL2);
        assertThat(Wsl.of("4.4.0-19041-Microsoft", Map.of(), true).version()).isEqualTo(Wsl.Version.WSL1);
    }

    @Test
    void eachHostGetsItsOwnKvmFix() {
        Wsl linux = Wsl.of("6.1.0-28-amd64", Map.of(), false);
        assertThat(linux.kvmMissingFix()).contains("load kvm_intel or kvm_amd").doesNotContain("wsl");
        assertThat(linux.kvmGroupFix()).isEqualTo("sudo usermod -aG kvm $USER, then log in again");
        Wsl wsl1 = Wsl.of("4.4.0-19041-Microsoft", Map.of("WSL_DISTRO_NAME", "Debian"), false);
        assertThat(wsl1.kvmMissingFix()).contains("wsl --set-version Debian 2").doesNotContain("nestedVirtualization");
        Wsl wsl2 = Wsl.of("6.6.87.2-microsoft-standard-WSL2", Map.of("WSL_DISTRO_NAME", "Debian"), false);
        assertThat(wsl2.kvmMissingFix()).contains("nestedVirtualization=true").doesNotContain("kvm_intel");
        assertThat(wsl2.kvmGroupFix()).contains("wsl --terminate Debian");
    }

    @Test
    void plainLinuxIsNoWsl() {
        Wsl w = Wsl.of("6.1.0-28-amd64", Map.of(), false);
        assertThat(w.any()).isFalse();
        assertThat(w.distribution()).isEmpty();
        assertThat(Wsl.of("6.1.0-28-amd64", Map.of("WSL_DISTRO_NAME", ""), false).any()).isFalse();
    }

    @Test
    void aDistributionNameWithASpaceIsQuotedForWindowsCommands() {
        assertThat(Wsl.of("6.6.87.2-microsoft-standard-WSL2", Map.of("WSL_DISTRO_NAME", "My Ubuntu"), false)
                .distributionArgument()).isEqualTo("\"My Ubuntu\"");
        assertThat(Wsl.of("6.6.87.2-microsoft-standard-WSL2", Map.of(), false).distributionArgument())
                .isEqualTo("<distribution>");
    }
}
