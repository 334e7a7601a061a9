package dev.kosa8.secrets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileSecretValuesTest {
    @TempDir
    Path tmp;

    @Test
    void roundTripsValuesInAFileOnlyTheUserCanRead() throws Exception {
        Path dir = tmp.resolve("config/kosa8");
        FileSecretValues v = new FileSecretValues(dir);
        assertThat(v.get("A")).isEmpty();

        v.put("A", "sk-first-value");
        v.put("B", "ghp_\"quoted\\value'");
        v.put("A", "sk-second-value");

        assertThat(v.get("A")).contains("sk-second-value");
        assertThat(new FileSecretValues(dir).get("B")).contains("ghp_\"quoted\\value'");
        assertThat(mode(v.file())).isEqualTo("rw-------");
        assertThat(mode(dir)).isEqualTo("rwx------");
        v.remove("A");
        v.remove("A");
        assertThat(v.get("A")).isEmpty();
        assertThat(v.get("B")).isPresent();
    }

    @Test
    void staysAt0600AcrossRewrites() throws Exception {
        FileSecretValues v = new FileSecretValues(tmp);
        v.put("A", "12345678");
        assertThat(mode(v.file())).isEqualTo("rw-------");
        v.put("B", "abcdefgh");
        assertThat(mode(v.file())).isEqualTo("rw-------");
    }

    @Test
    void refusesToReadAFileOthersCanRead() throws Exception {
        FileSecretValues v = new FileSecretValues(tmp);
        v.put("A", "12345678");
        Files.setPosixFilePermissions(v.file(), PosixFilePermissions.fromString("rw-r--r--"));

        assertThatThrownBy(() -> v.get("A")).isInstanceOf(KosaException.class)
                .hasMessageContaining("other users can read or change it")
                .satisfies(e -> assertThat(((KosaException) e).suggestion()).contains("chmod 600 " + v.file()));
        assertThatThrownBy(() -> v.put("B", "abcdefgh")).isInstanceOf(KosaException.class);
        assertThat(Files.readString(v.file())).doesNotContain("abcdefgh");
    }

    @Test
    void refusesAFileOfAnotherUser() throws Exception {
        FileSecretValues v = new FileSecretValues(tmp);
        v.put("A", "12345678");
        try {
            Files.setAttribute(v.file(), "unix:uid", 65534);
        } catch (java.io.IOException e) {
            org.junit.jupiter.api.Assumptions.abort("only root can give a file away: " + e.getMessage());
        }
        assertThatThrownBy(() -> v.get("A")).isInstanceOf(KosaException.class)
                .hasMessageContaining("belongs to").hasMessageContaining("not to you");
    }

    @Test
    void refusesASymbolicLink() throws Exception {
        Path real = tmp.resolve("elsewhere.json");
        Files.writeString(real, "{}");
        Files.setPosixFilePermissions(real, PosixFilePermissions.fromString("rw-------"));
        Files.createSymbolicLink(tmp.resolve(FileSecretValues.FILE), real);
        assertThatThrownBy(() -> new FileSecretValues(tmp).get("A")).hasMessageContaining("symbolic link");
    }

    @Test
    void refusesADirectoryOthersCanWriteTo() throws Exception {
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertThatThrownBy(() -> new FileSecretValues(tmp).put("A", "12345678"))
                .hasMessageContaining("other users can replace files in it")
                .satisfies(e -> assertThat(((KosaException) e).suggestion()).isEqualTo("chmod go-w " + tmp));
    }

    @Test
    void writesAtomicallyAndLeavesNoTemporaryFiles() throws Exception {
        FileSecretValues v = new FileSecretValues(tmp);
        for (int i = 0; i < 20; i++) {
            v.put("K" + i, "value-" + "x".repeat(i + 8));
        }
        try (var files = Files.list(tmp)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly(FileSecretValues.FILE);
        }
        assertThat(v.get("K19")).contains("value-" + "x".repeat(27));
    }

    @Test
    void aFailedWriteLeavesNoTemporaryFile() throws Exception {
        // A non-empty directory where the file should be renamed to makes the final move fail.
        Path target = tmp.resolve(FileSecretValues.FILE);
        Files.createDirectories(target.resolve("blocker"));
        assertThatThrownBy(() -> PrivateFile.write(target, "{}".getBytes())).isInstanceOf(KosaException.class)
                .hasMessageContaining("cannot write " + target);
        try (var files = Files.list(tmp)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly(FileSecretValues.FILE);
        }
        assertThatThrownBy(() -> new FileSecretValues(tmp).get("A")).hasMessageContaining("not a regular file");
    }

    @Test
    void aDamagedFileIsReportedWithoutQuotingIt() throws Exception {
        Path f = tmp.resolve(FileSecretValues.FILE);
        Files.writeString(f, "{\"format\": \"kosa8-secret-values\", \"values\": {\"A\": \"sk-leaky-key");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
        assertThatThrownBy(() -> new FileSecretValues(tmp).get("A")).isInstanceOf(KosaException.class)
                .hasMessageContaining("not valid JSON").hasMessageNotContaining("sk-leaky-key");
    }

    private static String mode(Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }
}
