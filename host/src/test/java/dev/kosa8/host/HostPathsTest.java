package dev.kosa8.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HostPathsTest {
    @Test
    void followsXdgAndFallsBackToHome() {
        HostPaths p = HostPaths.from(Map.of("XDG_DATA_HOME", "/d", "XDG_RUNTIME_DIR", "/run/user/7"), "/home/u");
        assertThat(p.data()).isEqualTo(Path.of("/d/kosa8"));
        assertThat(p.cache()).isEqualTo(Path.of("/home/u/.cache/kosa8"));
        assertThat(p.daemonSocket()).isEqualTo(Path.of("/run/user/7/kosa8/kosa8d.sock"));
    }

    @Test
    void kosa8HomePutsEverythingInOneFolder() {
        HostPaths p = HostPaths.from(Map.of("KOSA8_HOME", "/k", "XDG_DATA_HOME", "/d"), "/home/u");
        assertThat(p.data()).isEqualTo(Path.of("/k/data"));
        assertThat(p.runtime()).isEqualTo(Path.of("/k/run"));
    }

    @Test
    void privateDirectoriesAreTightenedTo0700(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("run");
        Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxrwxrwx")));
        HostPaths.privateDirectory(dir);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).isEqualTo("rwx------");
    }
}
