package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link CheckpointMode#probe}: the host's userfaultfd chooses, the daemon's environment may force. */
class CheckpointModeTest {
    static final CheckpointMode.Userfaultfd.Answer USABLE = new CheckpointMode.Userfaultfd.Answer(true, "root");
    static final CheckpointMode.Userfaultfd.Answer REFUSED = new CheckpointMode.Userfaultfd.Answer(false,
            "not root, and vm.unprivileged_userfaultfd is 0");

    @Test
    void aHostWhereQemuMayUseUserfaultfdTakesBackgroundSnapshotsAndOneWhereItMayNotKeepsRamInAFile() {
        CheckpointMode.Choice yes = CheckpointMode.probe(Map.of(), USABLE);
        assertThat(yes.mode()).isEqualTo(CheckpointMode.BACKGROUND_SNAPSHOT);
        assertThat(yes.why()).contains("root");
        CheckpointMode.Choice no = CheckpointMode.probe(Map.of(), REFUSED);
        assertThat(no.mode()).isEqualTo(CheckpointMode.FILE_RAM);
        assertThat(no.why()).as("the reason, for the log and doctor").contains("unprivileged_userfaultfd is 0");
    }

    @Test
    void theDaemonsEnvironmentForcesEitherModeAndAWrongValueIsRefusedNamingTheRightOnes() {
        assertThat(CheckpointMode.probe(Map.of(CheckpointMode.ENV, "file-ram"), USABLE).mode())
                .isEqualTo(CheckpointMode.FILE_RAM);
        assertThat(CheckpointMode.probe(Map.of(CheckpointMode.ENV, "background"), REFUSED).mode())
                .as("forced even where it cannot work: the checkpoint then says why").isEqualTo(
                        CheckpointMode.BACKGROUND_SNAPSHOT);
        assertThat(CheckpointMode.probe(Map.of(CheckpointMode.ENV, " "), USABLE).mode())
                .as("blank: not set").isEqualTo(CheckpointMode.BACKGROUND_SNAPSHOT);
        assertThatThrownBy(() -> CheckpointMode.probe(Map.of(CheckpointMode.ENV, "fileram"), USABLE))
                .isInstanceOf(KosaException.class).hasMessageContaining("fileram")
                .satisfies(e -> assertThat(((KosaException) e).suggestion()).contains("background", "file-ram"));
    }

    @Test
    void thisHostsAnswerSaysWhy() {
        CheckpointMode.Userfaultfd.Answer here = CheckpointMode.Userfaultfd.usable();
        assertThat(here.why()).isNotBlank();
        // the tests run as root on Linux here; elsewhere the answer is no
        assertThat(here.usable()).isEqualTo(System.getProperty("os.name").equals("Linux")
                && here.why().matches("the daemon runs as root|vm.unprivileged_userfaultfd is 1"));
    }
}
