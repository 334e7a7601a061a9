package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What an attack from a guest must leave untouched on the host: a canary
 * folder beside the shared ones (a file in it, nothing else), and a marker
 * name that must never appear in the host's {@code /etc} or {@code /tmp}.
 * A class registers one ({@code @RegisterExtension static final HostCanary
 * canary = new HostCanary("NAME")}): it is planted before the class's tests
 * and removed after them.
 */
final class HostCanary implements BeforeAllCallback, AfterAllCallback {
    private final String name;
    /** The canary folder, by its real path, once planted. */
    Path outside;
    /** A name an attack tries to create on the host. */
    final String marker = "kosa8-attack-" + UUID.randomUUID();

    HostCanary(String name) {
        this.name = name;
    }

    /** Plants a fresh canary folder beside the shared folders. */
    @Override
    public void beforeAll(ExtensionContext ctx) throws IOException {
        Path dir = Kosa.HOME.resolveSibling("it-workspaces").resolve(name).toAbsolutePath();
        if (Files.exists(dir)) {
            Kosa.deleteTree(dir);
        }
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("canary"), "untouched\n");
        outside = dir.toRealPath();
    }

    @Override
    public void afterAll(ExtensionContext ctx) throws IOException {
        Kosa.deleteTree(outside);
    }

    void assertUntouched() throws IOException {
        try (var s = Files.list(outside)) {
            assertThat(s.map(p -> p.getFileName().toString()).toList()).containsExactly("canary");
        }
        assertThat(outside.resolve("canary")).content().isEqualTo("untouched\n");
        assertThat(Path.of("/etc", marker)).doesNotExist();
        assertThat(Path.of("/tmp", marker)).doesNotExist();
    }
}
