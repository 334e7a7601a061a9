package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.file.Files;
import java.nio.file.Path;
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
    void theKernelIsAskedAndItsAnswerNamesTheSysctl() throws Exception {
        CheckpointMode.Userfaultfd.Answer here = CheckpointMode.Userfaultfd.usable();
        String sysctl = new String(Files.readAllBytes(Path.of("/proc/sys/vm/unprivileged_userfaultfd"))).trim();
        assertThat(here.why()).contains("vm.unprivileged_userfaultfd is " + sysctl);
        // the tests run as root here, with CAP_SYS_PTRACE: the kernel grants one, asked, not inferred
        boolean root = Files.getAttribute(Path.of("/proc/self"), "unix:uid").equals(0);
        if (root || sysctl.equals("1")) {
            assertThat(here.usable()).as(here.why()).isTrue();
            assertThat(here.why()).startsWith("the kernel grants one");
        } else {
            assertThat(here.usable()).as(here.why()).isFalse();
        }
    }
}
