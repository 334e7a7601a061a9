package dev.kosa8.image.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pulls from a real registry server on loopback (Debian's docker-registry), pushed to by a real client (skopeo),
 * by tag and by digest, anonymous and with credentials from a Docker config; no VM.
 */
class RegistryPullTest {
    @TempDir
    Path tmp;

    static final byte[] LAYER = new TestTar().dir("etc/").file("etc/motd", "pulled\n").bytes();

    private Path pushable() throws Exception {
        return pushable("gzip");
    }

    private Path pushable(String compression) throws Exception {
        byte[] cfg = TestImages.config(List.of(LAYER), List.of("cat", "/etc/motd"), "", "/etc", List.of("X=1"));
        return TestImages.write(tmp.resolve("oci.tar"), TestImages.ociArchive(List.of(LAYER), cfg, "x:1",
                compression));
    }

    private List<String> pullAndRead(String ref, Path dockerConfig) throws Exception {
        Path archive = tmp.resolve("pulled-" + Math.abs(ref.hashCode()) + ".tar");
        List<String> log = new ArrayList<>();
        RegistryPull.toArchive(ref, archive, tmp.resolve("cache"), dockerConfig, log::add);
        try (ImageArchive a = ImageArchive.open(archive, Files.createTempDirectory(tmp, "m"), ImportLimits.DEFAULT)) {
            RootTree t = new RootTree(Files.createTempDirectory(tmp, "root"), ImportLimits.DEFAULT);
            for (ImageArchive.Layer l : a.layers()) {
                ImageImport.apply(a, l, t, "layer", ImportLimits.DEFAULT);
            }
            assertThat(a.config().cmd()).containsExactly("cat", "/etc/motd");
            assertThat(a.config().envMap()).containsEntry("X", "1");
            return List.of(Files.readString(t.root().resolve("etc/motd")));
        }
    }

    @Test
    void anAnonymousRegistryIsPulledFromByTagAndByDigest() throws Exception {
        try (TestRegistry r = new TestRegistry(tmp.resolve("reg"), null, null)) {
            String digest = r.push(pushable(), "it/motd:1");
            assertThat(digest).startsWith("sha256:");
            assertThat(pullAndRead("127.0.0.1:" + r.port + "/it/motd:1", null)).containsExactly("pulled\n");
            assertThat(pullAndRead("127.0.0.1:" + r.port + "/it/motd@" + digest, null)).containsExactly("pulled\n");
            assertThatThrownBy(() -> pullAndRead("127.0.0.1:" + r.port + "/it/absent:1", null))
                    .isInstanceOf(KosaException.class).hasMessageContaining("cannot pull 127.0.0.1:" + r.port
                            + "/it/absent:1");
        }
    }

    /** An image whose layer is zstd ({@code …tar+zstd}, kept so by skopeo) is pulled and applied like any other. */
    @Test
    void aZstdImageIsPulledAndItsLayerApplied() throws Exception {
        try (TestRegistry r = new TestRegistry(tmp.resolve("reg"), null, null)) {
            r.push(pushable("zstd"), "it/zstd:1");
            assertThat(pullAndRead("127.0.0.1:" + r.port + "/it/zstd:1", null)).containsExactly("pulled\n");
        }
    }

    @Test
    void aRegistryWithAuthIsPulledFromWithTheDockerConfigsCredentialsAndRefusedWithout() throws Exception {
        try (TestRegistry r = new TestRegistry(tmp.resolve("reg"), "kosa", "s3cret-pw")) {
            r.push(pushable(), "it/motd:1");
            String ref = "127.0.0.1:" + r.port + "/it/motd:1";
            assertThat(pullAndRead(ref, r.dockerConfig())).containsExactly("pulled\n");
            Path none = Files.writeString(tmp.resolve("empty-config.json"), "{}");
            assertThatThrownBy(() -> pullAndRead(ref, none)).isInstanceOf(KosaException.class)
                    .hasMessageContaining("cannot pull " + ref);
        }
    }

    @Test
    void defaultNamesAreTheRepositoryAndTagOrTheDigestsStart() {
        assertThat(RegistryPull.defaultName("busybox")).isEqualTo("busybox:latest");
        assertThat(RegistryPull.defaultName("ghcr.io/owner/tool:1.2")).isEqualTo("owner/tool:1.2");
        assertThat(RegistryPull.defaultName("127.0.0.1:5000/it/x@sha256:" + "a".repeat(64)))
                .isEqualTo("it/x:sha256-aaaaaaaaaaaa");
        assertThat(RegistryPull.isLoopback("127.0.0.1:5000")).isTrue();
        assertThat(RegistryPull.isLoopback("localhost:5000")).isTrue();
        assertThat(RegistryPull.isLoopback("[::1]:5000")).isTrue();
        assertThat(RegistryPull.isLoopback("registry.example.com")).isFalse();
        assertThat(RegistryPull.isLoopback("10.0.0.1:5000")).isFalse();
    }
}
