package dev.kosa8.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.host.Mounts;
import dev.kosa8.host.Wsl;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@code run}, {@code create} and {@code agent} say when the folder to share is on a Windows drive under WSL. */
class WindowsDriveWarningTest {
    private static final Wsl WSL2 = Wsl.of("6.6.87.2-microsoft-standard-WSL2", Map.of("WSL_DISTRO_NAME", "Debian"), false);
    private static final Mounts.Mount C = new Mounts.Mount("/mnt/c", "9p", "C:\\", "rw,aname=drvfs;path=C:\\");
    private static final Mounts.Mount ROOT = new Mounts.Mount("/", "ext4", "/dev/sdc", "rw");

    @Test
    void aFolderOnCUnderWsl2IsSaid() {
        assertThat(SandboxOptions.windowsDriveWarning(WSL2, "/mnt/c/Users/me/app", Optional.of(C)))
                .startsWith("kosa8: warning: /mnt/c/Users/me/app is on a Windows drive (/mnt/c)")
                .contains("Linux file system").contains("docs/wsl2.md");
    }

    @Test
    void theLinuxFileSystemAndPlainLinuxAreNot() {
        assertThat(SandboxOptions.windowsDriveWarning(WSL2, "/home/me/app", Optional.of(ROOT))).isNull();
        assertThat(SandboxOptions.windowsDriveWarning(WSL2, "/x", Optional.empty())).isNull();
        Wsl linux = Wsl.of("6.1.0-28-amd64", Map.of(), false);
        assertThat(SandboxOptions.windowsDriveWarning(linux, "/mnt/c/app", Optional.of(C))).isNull();
    }
}
