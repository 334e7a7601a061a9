package dev.kosa8.image;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PartStoreTest {
    private static final String HASH = "ab".repeat(32);
    @TempDir
    Path images;

    @Test
    void aCompletePartAppearsAtOnceUnderItsHash() throws IOException {
        PartStore store = new PartStore(images);

        Path dir = store.build(PartKind.KERNEL, HASH, d -> {
            Files.writeString(d.resolve("vmlinux"), "elf");
            Manifests.write(d, new PartManifest(1, "kernel", HASH, "now", 0.1, Map.of(), Map.of()));
        });

        assertThat(dir).isEqualTo(images.resolve("kernel").resolve(HASH));
        assertThat(store.has(PartKind.KERNEL, HASH)).isTrue();
        assertThat(Files.list(images.resolve("kernel"))).containsExactly(dir);
    }

    @Test
    void aFailedBuildLeavesNothingBehind() throws IOException {
        PartStore store = new PartStore(images);

        assertThatThrownBy(() -> store.build(PartKind.ROOTFS, HASH, d -> {
            Files.writeString(d.resolve("raw.img"), "half");
            throw new IOException("mke2fs died");
        })).hasMessage("mke2fs died");

        assertThat(store.has(PartKind.ROOTFS, HASH)).isFalse();
        assertThat(Files.list(images.resolve("rootfs"))).isEmpty();
    }

    @Test
    void partialsLeftByACrashAreRemovedByTheNextBuild() throws IOException {
        Path stale = Files.createDirectories(images.resolve("rootfs/.partial-abc-123/tree/etc"));
        Files.writeString(stale.resolve("hostname"), "x");
        Path kept = Files.createDirectories(images.resolve("rootfs").resolve(HASH));

        assertThat(new PartStore(images).removeStalePartials()).isEqualTo(1);

        assertThat(Files.list(images.resolve("rootfs"))).containsExactly(kept);
    }
}
