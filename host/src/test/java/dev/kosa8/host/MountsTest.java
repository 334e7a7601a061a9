package dev.kosa8.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class MountsTest {
    /** A WSL 2 distribution's mountinfo: its ext4 root, C: over 9p (older WSL) and D: over virtiofs (newer). */
    static final String WSL = """
            60 48 8:32 / / rw,relatime - ext4 /dev/sdc rw,discard,errors=remount-ro,data=ordered
            70 60 0:56 / /mnt/c rw,noatime - 9p C:\\134 rw,aname=drvfs;path=C:\\;uid=1000;gid=1000
            71 60 0:57 / /mnt/d rw,noatime - virtiofs drvfsaD rw
            72 60 0:58 / /mnt/wsl rw,relatime - tmpfs none rw
            73 60 0:59 / /home/me/with\\040space rw,relatime - ext4 /dev/sdd rw
            74 60 0:60 / /mnt/share rw,noatime shared:5 master:2 - 9p share rw,aname=drvfs;path=UNC\\134server\\134share
            75 60 0:61 / /srv/data rw,relatime shared:7 - ext4 /dev/sde rw
            """;

    @Test
    void aFolderUnderCIsOnAWindowsDrive() {
        var m = Mounts.of("/mnt/c/Users/me/project", WSL).orElseThrow();
        assertThat(m.point()).isEqualTo("/mnt/c");
        assertThat(m.source()).isEqualTo("C:\\");
        assertThat(m.windowsDrive()).isTrue();
        assertThat(Mounts.of("/mnt/d/src", WSL).orElseThrow().windowsDrive()).isTrue();
    }

    @Test
    void theLinuxFileSystemIsNot() {
        assertThat(Mounts.of("/home/me/project", WSL).orElseThrow().point()).isEqualTo("/");
        assertThat(Mounts.of("/home/me/project", WSL).orElseThrow().windowsDrive()).isFalse();
        assertThat(Mounts.of("/mnt/wsl/x", WSL).orElseThrow().windowsDrive()).isFalse();
        // a name that only begins like a mount point is not under it
        assertThat(Mounts.of("/mnt/cache", WSL).orElseThrow().point()).isEqualTo("/");
    }

    @Test
    void aWindowsShareIsToldByItsOptionsBehindOptionalFields() {
        var m = Mounts.of("/mnt/share/x", WSL).orElseThrow();
        assertThat(m.type()).isEqualTo("9p");
        assertThat(m.windowsDrive()).isTrue();
        var linux = Mounts.of("/srv/data/y", WSL).orElseThrow();
        assertThat(linux.point()).isEqualTo("/srv/data");
        assertThat(linux.type()).isEqualTo("ext4");
        assertThat(linux.windowsDrive()).isFalse();
    }

    @Test
    void escapedMountPointsAreRead() {
        assertThat(Mounts.of("/home/me/with space/x", WSL).orElseThrow().point()).isEqualTo("/home/me/with space");
    }

    @Test
    void aLaterMountOnTheSamePointHidesTheEarlier() {
        String stacked = WSL + "80 70 0:60 / /mnt/c rw - tmpfs none rw\n";
        assertThat(Mounts.of("/mnt/c/x", stacked).orElseThrow().type()).isEqualTo("tmpfs");
    }

    @Test
    void garbageLinesAreSkipped() {
        assertThat(Mounts.of("/x", "nonsense\n\n1 2 3\n")).isEmpty();
    }

    @Test
    void thisHostsTmpIsOnSomeMount() {
        assertThat(Mounts.host(Path.of("/tmp/does/not/exist"))).isPresent();
    }
}
