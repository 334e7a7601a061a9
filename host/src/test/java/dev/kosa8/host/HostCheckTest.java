package dev.kosa8.host;

import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code kosa8 doctor}'s findings over real distributions' os-release files and a host missing some tools. */
class HostCheckTest {
    static final String DEBIAN = """
            PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
            NAME="Debian GNU/Linux"
            VERSION_ID="12"
            ID=debian
            """;
    static final String UBUNTU = """
            PRETTY_NAME="Ubuntu 24.04.1 LTS"
            ID=ubuntu
            ID_LIKE=debian
            """;
    static final String FEDORA = """
            NAME="Fedora Linux"
            VERSION="41 (Workstation Edition)"
            ID=fedora
            PRETTY_NAME="Fedora Linux 41 (Workstation Edition)"
            """;
    static final String ROCKY = """
            NAME="Rocky Linux"
            ID="rocky"
            ID_LIKE="rhel centos fedora"
            PRETTY_NAME="Rocky Linux 9.4 (Blue Onyx)"
            """;
    static final String ARCH = """
            NAME="Arch Linux"
            PRETTY_NAME="Arch Linux"
            ID=arch
            BUILD_ID=rolling
            """;
    static final String MANJARO = """
            NAME="Manjaro Linux"
            ID=manjaro
            ID_LIKE=arch
            PRETTY_NAME="Manjaro Linux"
            """;
    static final String TUMBLEWEED = """
            NAME="openSUSE Tumbleweed"
            ID="opensuse-tumbleweed"
            ID_LIKE="opensuse suse"
            PRETTY_NAME="openSUSE Tumbleweed"
            """;
    static final String NIXOS = """
            NAME=NixOS
            ID=nixos
            PRETTY_NAME="NixOS 24.11 (Vicuna)"
            """;
    static final String ALPINE = """
            NAME="Alpine Linux"
            ID=alpine
            PRETTY_NAME="Alpine Linux v3.20"
            """;

    /** QEMU and qemu-img are missing, and the optional mmdebstrap, make and arm64 QEMU; everything else is there. */
    static final Set<String> ABSENT = Set.of("qemu-system-x86_64", "qemu-img", "mmdebstrap", "make",
            "qemu-system-aarch64");

    static HostCheck check(String osRelease, int java) {
        return HostCheck.of(OsRelease.parse(osRelease), p -> !ABSENT.contains(p), java);
    }

    @Test
    void debianAndUbuntuGetAptNamesAndLine() {
        HostCheck c = check(DEBIAN, 25);
        assertThat(c.distribution()).isEqualTo(Distribution.DEBIAN);
        assertThat(c.os().prettyName()).isEqualTo("Debian GNU/Linux 12 (bookworm)");
        assertThat(c.missing()).extracting(HostRequirement::program)
                .containsExactly("qemu-system-x86_64", "qemu-img");
        assertThat(c.missingOptional()).extracting(HostRequirement::program)
                .containsExactly("qemu-system-aarch64", "mmdebstrap", "make");
        assertThat(c.installLines(false)).containsExactly(
                "sudo apt-get install -y --no-install-recommends qemu-system-x86 qemu-utils");
        assertThat(check(UBUNTU, 25).installLines(false)).isEqualTo(c.installLines(false));
    }

    @Test
    void fedoraAndItsRelativesGetDnf() {
        assertThat(check(FEDORA, 21).installLines(false)).containsExactly(
                "sudo dnf install -y java-25-openjdk-devel qemu-system-x86-core qemu-img");
        assertThat(check(ROCKY, 25).distribution()).isEqualTo(Distribution.FEDORA);
    }

    @Test
    void archAndManjaroGetPacman() {
        assertThat(check(ARCH, 25).installLines(true)).containsExactly(
                "sudo pacman -S --needed qemu-system-x86 qemu-img qemu-system-aarch64 mmdebstrap make");
        assertThat(check(MANJARO, 25).distribution()).isEqualTo(Distribution.ARCH);
    }

    @Test
    void openSuseGetsZypper() {
        HostCheck c = check(TUMBLEWEED, 25);
        assertThat(c.distribution()).isEqualTo(Distribution.OPENSUSE);
        assertThat(c.installLines(false)).containsExactly("sudo zypper install -y qemu-x86 qemu-tools");
    }

    @Test
    void nixosGetsNixShellAndProfile() {
        // QEMU and qemu-img are one nix package, named once
        assertThat(check(NIXOS, 25).installLines(false)).containsExactly("nix-shell -p qemu   "
                + "(or for good: nix profile install nixpkgs#qemu)");
    }

    @Test
    void anUnknownDistributionGetsEveryKnownLine() {
        HostCheck c = check(ALPINE, 25);
        assertThat(c.distribution()).isEqualTo(Distribution.UNKNOWN);
        assertThat(c.installLines(false)).hasSize(5).first().asString().startsWith("Debian/Ubuntu: sudo apt-get");
        assertThat(c.installLines(false)).anyMatch(l -> l.startsWith("openSUSE: sudo zypper install -y qemu-x86"));
    }

    @Test
    void nothingMissingMeansNoLine() {
        HostCheck c = HostCheck.of(OsRelease.parse(FEDORA), p -> true, 25);
        assertThat(c.missing()).isEmpty();
        assertThat(c.installLines(true)).isEmpty();
    }

    @Test
    void osReleaseQuotingAndOddLines() {
        OsRelease os = OsRelease.parse("# comment\nID='opensuse-leap'\nID_LIKE=\"suse  opensuse\"\nbad line\n=x\n");
        assertThat(os.id()).isEqualTo("opensuse-leap");
        assertThat(os.idLike()).containsExactly("suse", "opensuse");
        assertThat(Distribution.of(os)).isEqualTo(Distribution.OPENSUSE);
        assertThat(OsRelease.parse("").id()).isEqualTo("linux");
    }
}
