package dev.kosa8.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class McpHttpTokenTest {
    @TempDir
    Path dir;

    @Test
    void aNewTokenIs256RandomBitsInBase64url() {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 100; i++) {
            String t = McpHttpToken.generate().value();
            assertThat(t).matches("[A-Za-z0-9_-]{43}");
            seen.add(t);
        }
        assertThat(seen).hasSize(100);
    }

    @Test
    void onlyTheTokenItselfMatches() {
        McpHttpToken t = McpHttpToken.generate();
        assertThat(t.matches(t.value())).isTrue();
        assertThat(t.matches(null)).isFalse();
        assertThat(t.matches("")).isFalse();
        assertThat(t.matches(t.value().substring(1))).isFalse();
        assertThat(t.matches(t.value() + "x")).isFalse();
        assertThat(t.matches(t.value().toUpperCase())).isEqualTo(t.value().equals(t.value().toUpperCase()));
        assertThat(t.toString()).doesNotContain(t.value());
    }

    @Test
    void aTokenFileIsReadWhenOnlyItsOwnerMayReadIt() throws Exception {
        Path f = dir.resolve("token");
        String value = "k".repeat(40);
        Files.writeString(f, "  " + value + "  \nsecond line\n");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
        assertThat(McpHttpToken.read(f).value()).isEqualTo(value);

        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> McpHttpToken.read(f)).isInstanceOf(KosaException.class)
                .hasMessageContaining("can be read or written by others")
                .satisfies(e -> assertThat(((KosaException) e).suggestion()).contains("chmod 600"));
    }

    @Test
    void aTokenFileWithAShortOrOddTokenIsRefused() throws Exception {
        Path f = dir.resolve("token");
        for (String bad : new String[] {"short", "k".repeat(31), "with space " + "k".repeat(40), ""}) {
            Files.writeString(f, bad);
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
            assertThatThrownBy(() -> McpHttpToken.read(f)).as(bad).isInstanceOf(KosaException.class)
                    .hasMessageContaining("not a usable token");
        }
        assertThatThrownBy(() -> McpHttpToken.read(dir.resolve("missing"))).isInstanceOf(KosaException.class)
                .hasMessageContaining("cannot read token file");
    }
}
