package dev.kosa8.workspace;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.LinuxAbi;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/**
 * The guest's open flags arrive in 9P's encoding (x86-64's values on every architecture) and reach the host's
 * open(2) in the host's: on an arm64 host, 9P's O_DIRECT bit must not become arm64's O_DIRECTORY, nor 9P's
 * O_DIRECTORY be lost.
 */
class HostFlagsTest {
    @Test
    void onArm64NinePsDirectIsDroppedAndItsDirectoryIsArm64s() {
        assertThat(P9Opens.hostFlags(LinuxAbi.AARCH64, LinuxAbi.DOTL_DIRECT) & 040000).isZero();
        assertThat(P9Opens.hostFlags(LinuxAbi.AARCH64, LinuxAbi.DOTL_DIRECTORY)).isEqualTo(040000);
        assertThat(P9Opens.hostFlags(LinuxAbi.AARCH64, LinuxAbi.DOTL_NOFOLLOW | LinuxAbi.O_RDWR))
                .isEqualTo(LinuxAbi.O_RDWR); // the server adds its own O_NOFOLLOW where it means to
        assertThat(P9Opens.hostFlags(LinuxAbi.AARCH64, 3)).isEqualTo(LinuxAbi.O_RDONLY); // 9P's "no access"
    }

    /** On x86-64 the flags kept are exactly the bits the guest sent (only SYNC gains DSYNC, as open(2) adds it). */
    @Property(tries = 1000)
    void onX8664TheKeptFlagsAreTheGuestsOwnBits(@ForAll int dotl) {
        int keep = 01 | 02 | 0100 | 0200 | 01000 | 02000 | 010000 | 04010000 | 0200000;
        int access = (dotl & 3) == 3 ? 0 : dotl & 3;
        int want = (dotl & keep & ~3) | access | ((dotl & 04000000) != 0 ? 010000 : 0);
        assertThat(P9Opens.hostFlags(LinuxAbi.X86_64, dotl)).isEqualTo(want);
    }
}
