package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.image.ImageConfig;
import dev.kosa8.protocol.Message;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SandboxImageTest {
    static final ImageConfig APP = ImageConfig.NONE.withEnv("APP_HOME", "/srv/app").withEnv("MODE", "image")
            .withWorkingDir("/srv/app").withUser("app:staff");

    @Test
    void everyCommandRunsWithTheImagesEnvDirectoryAndUserUnderWhatTheCommandSetsItself() {
        Message.ExecSpec plain = new Message.ExecSpec(List.of("id"), Map.of("MODE", "command"), "", "", false, 0, 0);
        Message.ExecSpec s = ExecRelay.withImage(plain, APP, Map.of("KEY", "placeholder", "MODE", "sandbox"));
        assertThat(s.env()).containsEntry("APP_HOME", "/srv/app").containsEntry("KEY", "placeholder")
                .containsEntry("MODE", "command");
        assertThat(s.cwd()).isEqualTo("/srv/app");
        assertThat(s.user()).as("the agent runs a user by name; the group is the user's own").isEqualTo("app");

        Message.ExecSpec own = new Message.ExecSpec(List.of("id"), Map.of(), "/tmp", "root", false, 0, 0);
        Message.ExecSpec o = ExecRelay.withImage(own, APP, Map.of());
        assertThat(o.cwd()).isEqualTo("/tmp");
        assertThat(o.user()).isEqualTo("root");

        Message.ExecSpec none = ExecRelay.withImage(plain, ImageConfig.NONE, Map.of());
        assertThat(none.cwd()).as("no image: as before, the agent's default").isEmpty();
        assertThat(none.user()).isEmpty();
        assertThat(new SandboxImage(null, null)).isEqualTo(SandboxImage.DEFAULT);
    }
}
