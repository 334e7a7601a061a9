package dev.kosa8.image.debian;

import dev.kosa8.host.KosaException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A whole image's lock names the kernel's and busybox's packages on {@code @PART} lines, as format 2. */
class LockFilePartsTest {
    static Locked locked(String name, String version) {
        return new Locked(name, version, "amd64", "cd".repeat(32), 42, "debian-security",
                "pool/main/x/" + name + "_" + version + "_amd64.deb");
    }

    private static final LockFile ROOTFS = new LockFile(List.of("suite bookworm, minbase, includes bash"),
            List.of(locked("bash", "5.2.15-2+b9"), locked("libc6", "2.36-9+deb12u13")));

    @Test
    void aRootFilesystemsLockStaysFormat1AsOlderKosa8sWroteIt() {
        assertThat(ROOTFS.text()).startsWith(LockFile.HEADER + "\n").doesNotContain("@");
        assertThat(LockFile.parse(ROOTFS.text(), "t")).isEqualTo(ROOTFS);
    }

    @Test
    void aWholeImagesLockIsFormat2AndReadsBackTheSame() {
        LockFile whole = ROOTFS.withParts(Map.of("busybox", locked("busybox-static", "1:1.35.0-4+b3"),
                "kernel", locked("linux-image-6.1.0-41-amd64", "6.1.158-1")));
        String text = whole.text();
        assertThat(text).startsWith(LockFile.HEADER_2 + "\n")
                .contains("\n@kernel linux-image-6.1.0-41-amd64 6.1.158-1 amd64 ")
                .endsWith("@busybox busybox-static 1:1.35.0-4+b3 amd64 " + "cd".repeat(32)
                        + " 42 debian-security pool/main/x/busybox-static_1:1.35.0-4+b3_amd64.deb\n");
        assertThat(text.indexOf("@kernel")).isLessThan(text.indexOf("@busybox")); // the parts' order, always
        LockFile back = LockFile.parse(text, "t");
        assertThat(back).isEqualTo(whole);
        assertThat(back.packages()).extracting(Locked::name).containsExactly("bash", "libc6");
        assertThat(back.part("kernel")).map(Locked::version).contains("6.1.158-1");
        assertThat(back.all()).hasSize(4);
    }

    @Test
    void partLinesAreRefusedInFormat1AndUnknownOrRepeatedPartsInFormat2() {
        String two = ROOTFS.withParts(Map.of("kernel", locked("linux-image-x", "1"))).text();
        assertThatThrownBy(() -> LockFile.parse(two.replace(LockFile.HEADER_2, LockFile.HEADER), "f1"))
                .isInstanceOf(KosaException.class).hasMessageContaining("does not have 7 words");
        assertThatThrownBy(() -> LockFile.parse(two.replace("@kernel", "@initrd"), "f2"))
                .isInstanceOf(KosaException.class).hasMessageContaining("names the part 'initrd'");
        String kernel = two.lines().filter(l -> l.startsWith("@kernel")).findFirst().orElseThrow();
        assertThatThrownBy(() -> LockFile.parse(two + kernel + "\n", "f3"))
                .isInstanceOf(KosaException.class).hasMessageContaining("a second time");
        assertThatThrownBy(() -> LockFile.parse(two.replace("@kernel linux-image-x 1 ", "@kernel 1 "), "f4"))
                .isInstanceOf(KosaException.class).hasMessageContaining("does not have 7 words");
    }

    @Test
    void somethingElseIsNotALock() {
        assertThatThrownBy(() -> LockFile.parse("# kosa8 Debian package lock, format 3\n", "f"))
                .isInstanceOf(KosaException.class).hasMessageContaining("is not a kosa8 package lock");
    }
}
