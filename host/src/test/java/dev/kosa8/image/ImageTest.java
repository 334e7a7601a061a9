package dev.kosa8.image;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ImageTest {
    private static final Image IMAGE = new Image("0123456789abcdef", Path.of("/i"), Path.of("/i/vmlinux"),
            Path.of("/i/initramfs.cpio"), Path.of("/i/rootfs.qcow2"), "6.1.0-57-amd64", 1);

    @Test
    void kernelCommandLineNamesTheConsoleRootDiskAndHostName() {
        assertThat(IMAGE.kernelCommandLine("box-1")).containsExactly(
                "console=ttyS0", "root=/dev/vda", "rw", "panic=-1", "quiet", "kosa8.hostname=box-1");
        assertThat(IMAGE.probeCommandLine()).contains("kosa8.probe=1").doesNotContain("root=/dev/vda");
    }

    @Test
    void kernelCommandLineRefusesAHostNameThatWouldSplitIntoWords() {
        assertThatThrownBy(() -> IMAGE.kernelCommandLine("a b")).hasMessageContaining("not a valid host name");
        assertThatThrownBy(() -> IMAGE.kernelCommandLine("-x")).hasMessageContaining("not a valid host name");
    }

    @Test
    void buildStepLineShowsPositionPartAndEstimate() {
        assertThat(new BuildStep(2, 5, "root filesystem", "mmdebstrap bookworm", Duration.ofSeconds(30)).line())
                .isEqualTo("[2/5] root filesystem: mmdebstrap bookworm (about 30 s)");
        assertThat(new BuildStep(5, 5, "initramfs", "busybox", Duration.ZERO).line()).isEqualTo("[5/5] initramfs: busybox");
    }
}
