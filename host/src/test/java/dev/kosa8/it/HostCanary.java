package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;

/**
 * What an attack from a guest must leave untouched on the host: a canary
 * folder beside the shared ones (a file in it, nothing else), and a marker
 * name that must never appear in the host's {@code /etc} or {@code /tmp}.
 */
final class HostCanary {
    /** The canary folder, by its real path. */
    final Path outside;
    /** A name an attack tries to create on the host. */
    final String marker = "kosa8-attack-" + UUID.randomUUID();

    private HostCanary(Path outside) {
        this.outside = outside;
    }

    /** Plants a fresh canary folder named {@code name} beside the shared folders. */
    static HostCanary plant(String name) throws IOException {
        Path outside = Kosa.HOME.resolveSibling("it-workspaces").resolve(name).toAbsolutePath();
        if (Files.exists(outside)) {
            Kosa.deleteTree(outside);
        }
        Files.createDirectories(outside);
        Files.writeString(outside.resolve("canary"), "untouched\n");
        return new HostCanary(outside.toRealPath());
    }

    void assertUntouched() throws IOException {
        try (var s = Files.list(outside)) {
            assertThat(s.map(p -> p.getFileName().toString()).toList()).containsExactly("canary");
        }
        assertThat(outside.resolve("canary")).content().isEqualTo("untouched\n");
        assertThat(Path.of("/etc", marker)).doesNotExist();
        assertThat(Path.of("/tmp", marker)).doesNotExist();
    }

    void remove() throws IOException {
        Kosa.deleteTree(outside);
    }
}
