package dev.kosa8.image;

import dev.kosa8.image.debian.LockFile;
import dev.kosa8.image.debian.Locked;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The lock is kept only when dpkg's status in the tree has exactly its packages. */
class RootfsLockTest {
    @TempDir
    Path tree;

    static Locked locked(String name, String version) {
        return new Locked(name, version, "amd64", "ab".repeat(32), 10, "debian",
                "pool/main/x/" + name + "_" + version + "_amd64.deb");
    }

    void status(String text) throws Exception {
        Files.createDirectories(tree.resolve("var/lib/dpkg"));
        Files.writeString(tree.resolve("var/lib/dpkg/status"), text);
    }

    @Test
    void theSamePackagesMeanNoDifferenceAndOthersAreNamed() throws Exception {
        status("""
                Package: bash
                Status: install ok installed
                Architecture: amd64
                Version: 5.2.15-2+b9
                Description: shell
                 more

                Package: libc6
                Status: install ok installed
                Architecture: amd64
                Version: 2.36-9+deb12u14

                Package: gone
                Status: deinstall ok config-files
                Architecture: amd64
                Version: 1
                """);
        LockFile lock = new LockFile(List.of(), List.of(locked("bash", "5.2.15-2+b9"), locked("libc6", "2.36-9+deb12u14")));
        assertThat(RootfsLock.differences(lock, tree)).isEmpty();
        LockFile other = new LockFile(List.of(), List.of(locked("bash", "5.2.15-2+b9"), locked("libc6", "2.36-9+deb12u13"),
                locked("tini", "0.19.0-1")));
        assertThat(RootfsLock.differences(other, tree)).containsExactly("+libc6 2.36-9+deb12u14 amd64",
                "-libc6 2.36-9+deb12u13 amd64", "-tini 0.19.0-1 amd64");
    }
}
