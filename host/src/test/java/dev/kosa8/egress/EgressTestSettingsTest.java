package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EgressTestSettingsTest {
    @TempDir
    Path dir;

    @Test
    void unsetOrMissingMeansNoTestSettingsAtAll() {
        assertThat(EgressTestSettings.fromEnvironment(Map.of())).isEqualTo(EgressTestSettings.NONE);
        assertThat(EgressTestSettings.fromEnvironment(Map.of(EgressTestSettings.ENVIRONMENT, " ")))
                .isEqualTo(EgressTestSettings.NONE);
        EgressTestSettings missing = EgressTestSettings.fromEnvironment(
                Map.of(EgressTestSettings.ENVIRONMENT, dir.resolve("absent.json").toString()));
        assertThat(missing.enabled()).isFalse();
    }

    @Test
    void aFileIsReadWithTheFilesItCameFrom() throws Exception {
        Path file = write(dir.resolve("t.json"), dir.resolve("ca.pem"));
        EgressTestSettings t = EgressTestSettings.fromEnvironment(Map.of(EgressTestSettings.ENVIRONMENT, file.toString()));
        assertThat(t.enabled()).isTrue();
        assertThat(t.loopback()).containsEntry("api.test:443", 38443);
        assertThat(t.resolve()).containsEntry("rebind.test", "127.0.0.1");
        assertThat(t.files()).containsExactly(file, dir.resolve("ca.pem"));
    }

    @Test
    void aMalformedFileIsAnErrorThatSaysWhatToDo() throws Exception {
        Path file = Files.writeString(dir.resolve("bad.json"), "{not json");
        assertThatThrownBy(() -> EgressTestSettings.fromEnvironment(Map.of(EgressTestSettings.ENVIRONMENT,
                file.toString()))).isInstanceOf(KosaException.class).hasMessageContaining(file.toString());
    }

    @Test
    void settingsOrTheirCaInsideAWorkspaceAreRefusedEvenThroughASymbolicLink() throws Exception {
        Path workspace = Files.createDirectories(dir.resolve("ws"));
        Path outside = Files.createDirectories(dir.resolve("outside"));
        Path link = Files.createSymbolicLink(dir.resolve("ws-link"), workspace);

        EgressTestSettings inside = read(write(workspace.resolve("t.json"), outside.resolve("ca.pem")));
        assertThatThrownBy(() -> inside.refuseInside(workspace, "sbx-1")).isInstanceOf(KosaException.class)
                .hasMessageContaining("inside the workspace of sandbox sbx-1").hasMessageContaining("t.json");
        assertThatThrownBy(() -> inside.refuseInside(link, "sbx-1")).isInstanceOf(KosaException.class);
        assertThatThrownBy(() -> inside.refuseInNew(link)).isInstanceOf(KosaException.class)
                .hasMessageContaining("inside the folder the new sandbox would share");

        EgressTestSettings caInside = read(write(outside.resolve("t.json"), workspace.resolve("sub/ca.pem")));
        assertThatThrownBy(() -> caInside.refuseInside(workspace, "sbx-2")).isInstanceOf(KosaException.class)
                .hasMessageContaining("ca.pem");
        // the settings file named through a link into the workspace is inside it too
        EgressTestSettings viaLink = read(write(link.resolve("t2.json"), outside.resolve("ca.pem")));
        assertThatThrownBy(() -> viaLink.refuseInside(workspace, "sbx-3")).isInstanceOf(KosaException.class);

        EgressTestSettings clear = read(write(outside.resolve("t3.json"), outside.resolve("ca.pem")));
        assertThatCode(() -> clear.refuseInside(workspace, "sbx-4")).doesNotThrowAnyException();
        // a sibling whose name merely starts the same is not inside
        Path sibling = Files.createDirectories(dir.resolve("ws-other"));
        EgressTestSettings besides = read(write(sibling.resolve("t.json"), outside.resolve("ca.pem")));
        assertThatCode(() -> besides.refuseInside(workspace, "sbx-5")).doesNotThrowAnyException();
        assertThatCode(() -> EgressTestSettings.NONE.refuseInside(workspace, "sbx-6")).doesNotThrowAnyException();
    }

    private static Path write(Path file, Path ca) throws Exception {
        Files.createDirectories(file.getParent());
        return Files.writeString(file, """
                {"loopback": {"api.test:443": 38443}, "resolve": {"rebind.test": "127.0.0.1"}, "trustedCa": "%s"}
                """.formatted(ca));
    }

    private static EgressTestSettings read(Path file) {
        return EgressTestSettings.fromEnvironment(Map.of(EgressTestSettings.ENVIRONMENT, file.toString()));
    }
}
