package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NetworkSettingsTest {
    @TempDir
    Path dir;

    @Test
    void noFileMeansNoExceptionsAndNoTrustButTheDirectoryIsStillGuarded() {
        Path config = dir.resolve("config");
        NetworkSettings s = NetworkSettings.load(config);
        assertThat(s.exceptions().all()).isEmpty();
        assertThat(s.trustHostCas()).isFalse();
        assertThat(s.guarded()).containsExactly(config);
    }

    @Test
    void aFileGivesExceptionsTheDefaultTrustAndCaFilesToGuard() throws Exception {
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve(NetworkSettings.FILE), """
                {"addressExceptions": {"deb.debian.org": ["203.0.113.0/24"], "*.corp.example": ["10.20.0.0/16"]},
                 "trustHostCas": true,
                 "hostCaFiles": ["/etc/company/ca.pem"]}
                """);
        NetworkSettings s = NetworkSettings.load(config);
        assertThat(s.trustHostCas()).isTrue();
        assertThat(s.exceptions().all()).extracting(Object::toString)
                .containsExactly("deb.debian.org -> 203.0.113.0/24", "*.corp.example -> 10.20.0.0/16");
        assertThat(s.exceptions().covering("deb.debian.org", InetAddress.getByName("203.0.113.80"))).isPresent();
        assertThat(s.hostCaFiles()).containsExactly(Path.of("/etc/company/ca.pem"));
        assertThat(s.guarded()).containsExactly(config, Path.of("/etc/company/ca.pem"));
    }

    @Test
    void everyProblemInTheFileIsNamedInOneErrorThatNamesTheFile() throws Exception {
        Path config = Files.createDirectories(dir.resolve("config"));
        Path file = Files.writeString(config.resolve(NetworkSettings.FILE), """
                {"addressExceptions": {"deb.debian.org": ["0.0.0.0/0"], "ok.example": "10.0.0.0/8"},
                 "trustHostCAs": true, "trustHostCas": "yes", "hostCaFiles": ["relative.pem"]}
                """);
        assertThatThrownBy(() -> NetworkSettings.load(config)).isInstanceOf(KosaException.class)
                .hasMessageContaining(file.toString())
                .hasMessageContaining("addressExceptions.deb.debian.org: '0.0.0.0/0' is wider than /8")
                .hasMessageContaining("addressExceptions.ok.example must be a list")
                .hasMessageContaining("unknown setting 'trustHostCAs'")
                .hasMessageContaining("trustHostCas must be true or false")
                .hasMessageContaining("relative.pem is not an absolute path");
        Files.writeString(file, "{not json");
        assertThatThrownBy(() -> NetworkSettings.load(config)).isInstanceOf(KosaException.class)
                .hasMessageContaining("it is not JSON");
    }

    @Test
    void theConfigDirectoryOrACaFileInsideAWorkspaceIsRefusedEvenThroughASymbolicLink() throws Exception {
        Path workspace = Files.createDirectories(dir.resolve("ws"));
        Path link = Files.createSymbolicLink(dir.resolve("ws-link"), workspace);
        NetworkSettings inside = NetworkSettings.load(workspace.resolve(".config/kosa8"));
        assertThatThrownBy(() -> inside.refuseInside(workspace, "sbx-1")).isInstanceOf(KosaException.class)
                .hasMessageContaining("inside the workspace of sandbox sbx-1");
        assertThatThrownBy(() -> inside.refuseInside(link, "sbx-1")).isInstanceOf(KosaException.class);
        assertThatThrownBy(() -> inside.refuseInNew(link)).isInstanceOf(KosaException.class)
                .hasMessageContaining("inside the folder the new sandbox would share")
                .satisfies(e -> assertThat(((KosaException) e).suggestion()).contains("--workspace"));
        NetworkSettings viaLink = NetworkSettings.load(link.resolve("config"));
        assertThatThrownBy(() -> viaLink.refuseInside(workspace, "sbx-2")).isInstanceOf(KosaException.class);

        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve(NetworkSettings.FILE), "{\"hostCaFiles\": [\"" + workspace.resolve("ca.pem")
                + "\"]}");
        NetworkSettings caInside = NetworkSettings.load(config);
        assertThatThrownBy(() -> caInside.refuseInside(workspace, "sbx-3")).isInstanceOf(KosaException.class)
                .hasMessageContaining("ca.pem");
        assertThatCode(() -> NetworkSettings.load(dir.resolve("elsewhere")).refuseInside(workspace, "sbx-4"))
                .doesNotThrowAnyException();
    }
}
