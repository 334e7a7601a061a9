package dev.kosa8.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The listener's sandbox records over a backend with no VM: the bound on how many, and kill's answers. */
class E2bSandboxesTest {
    @Test
    void oneSandboxPastTheBoundIsRefusedAndNothingIsMade() {
        FakeBackend backend = new FakeBackend();
        try (E2bSandboxes all = new E2bSandboxes(backend, s -> { })) {
            for (int i = 0; i < E2bSandboxes.MAX_SANDBOXES; i++) {
                all.create("kosa8/debian", Map.of(), Map.of(), Duration.ofMinutes(5), false, 1, 256);
            }
            assertThatThrownBy(() -> all.create("kosa8/debian", Map.of(), Map.of(), Duration.ofMinutes(5), false, 1,
                    256)).isInstanceOf(ApiError.class).satisfies(e -> assertThat(((ApiError) e).status()).isEqualTo(429));
            assertThat(backend.machines).hasSize(E2bSandboxes.MAX_SANDBOXES);
            String one = all.list().getFirst().id;
            assertThat(all.kill(one)).isTrue();
            assertThat(all.kill(one)).isFalse();
            assertThat(all.find(one)).isEmpty();
            all.create("kosa8/debian", Map.of(), Map.of(), Duration.ofMinutes(5), false, 1, 256);
        }
    }

    @Test
    void aRestartedListenerKnowsItsSandboxesTheirTokensAndTimeoutsAgain(@org.junit.jupiter.api.io.TempDir
                                                                         java.nio.file.Path dir) throws Exception {
        FakeBackend backend = new FakeBackend();
        java.nio.file.Path store = dir.resolve("e2b-sandboxes.json");
        E2bSandbox kept;
        E2bSandbox late;
        try (E2bSandboxes all = new E2bSandboxes(backend, s -> { }, store)) {
            kept = all.create("kosa8/debian", Map.of("k", "v"), Map.of("A", "1"), Duration.ofMinutes(5), true, 1, 256);
            late = all.create("kosa8/debian", Map.of(), Map.of(), Duration.ofMinutes(5), false, 1, 256);
            late.endAt(java.time.Instant.now().minusSeconds(1)); // its time passes while the daemon is away
        }
        assertThat(java.nio.file.Files.getPosixFilePermissions(store))
                .isEqualTo(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        try (E2bSandboxes again = new E2bSandboxes(backend, s -> { }, store)) {
            E2bSandbox back = again.find(kept.id).orElseThrow();
            assertThat(back.accessToken).isEqualTo(kept.accessToken);
            assertThat(back.metadata).isEqualTo(Map.of("k", "v"));
            assertThat(back.envs).isEqualTo(Map.of("A", "1"));
            assertThat(back.autoPause).isTrue();
            assertThat(back.defaultUser).isEqualTo("user");
            assertThat(back.endAt()).isEqualTo(kept.endAt());
            long deadline = System.currentTimeMillis() + 5000;
            while (backend.machines.containsKey(late.id) && System.currentTimeMillis() < deadline) {
                Thread.sleep(100);
            }
            assertThat(backend.machines).doesNotContainKey(late.id); // reaped by the new listener
        }
        java.nio.file.Files.writeString(store, "{not json");
        try (E2bSandboxes broken = new E2bSandboxes(backend, s -> { }, store)) {
            assertThat(broken.list()).isEmpty();
        }
    }

    @Test
    void aSandboxRemovedBehindTheListenersBackIsForgotten() {
        FakeBackend backend = new FakeBackend();
        try (E2bSandboxes all = new E2bSandboxes(backend, s -> { })) {
            E2bSandbox s = all.create("kosa8/debian", Map.of("k", "v"), Map.of(), Duration.ofMinutes(5), false, 1, 256);
            assertThat(s.defaultUser).isEqualTo("user");
            assertThat(s.accessToken).matches("[0-9a-f]{40}");
            backend.remove(s.id); // `kosa8 rm -f ID`
            assertThat(all.find(s.id)).isEmpty();
            assertThat(all.kill(s.id)).isFalse();
            assertThat(all.list()).isEmpty();
        }
    }
}
