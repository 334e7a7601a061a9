package dev.kosa8.image;

import dev.kosa8.host.HostPaths;
import dev.kosa8.vm.GuestArch;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ImageTest {
    private static final Image IMAGE = new Image("0123456789abcdef", Path.of("/i"), Path.of("/i/vmlinux"),
            Path.of("/i/initramfs.cpio"), Path.of("/i/rootfs.qcow2"), "6.1.0-57-amd64", 1, GuestArch.AMD64);

    @Test
    void kernelCommandLineNamesTheConsoleRootDiskAndHostName() {
        assertThat(IMAGE.kernelCommandLine("box-1")).containsExactly(
                "console=ttyS0", "root=/dev/vda", "rw", "panic=-1", "quiet", "kosa8.hostname=box-1");
        assertThat(IMAGE.probeCommandLine()).contains("kosa8.probe=1").doesNotContain("root=/dev/vda");
    }

    @Test
    void anArm64ImagesConsoleIsItsPl011AndItsImagesAreKeptApart() {
        Image arm = new Image("0123456789abcdef", Path.of("/i"), Path.of("/i/vmlinux"), Path.of("/i/initramfs.cpio"),
                Path.of("/i/rootfs.qcow2"), "6.12.0-arm64", 1, GuestArch.ARM64);
        assertThat(arm.kernelCommandLine("box-1")).contains("console=ttyAMA0").doesNotContain("console=ttyS0");
        assertThat(arm.probeCommandLine()).contains("console=ttyAMA0");
        HostPaths paths = new HostPaths(Path.of("/d"), Path.of("/c"), Path.of("/r"));
        assertThat(ImageStore.directory(paths, GuestArch.host())).isEqualTo(paths.images());
        GuestArch other = GuestArch.host() == GuestArch.AMD64 ? GuestArch.ARM64 : GuestArch.AMD64;
        assertThat(ImageStore.directory(paths, other))
                .isEqualTo(paths.images().resolve("arch").resolve(other.debianName()));
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
