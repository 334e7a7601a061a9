package dev.kosa8.image;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class PartHashesTest {
    private static final DebPackage KERNEL = new DebPackage("linux-image-6.1.0-57-amd64", "6.1.192-3", "amd64");
    private static final DebPackage BUSYBOX = new DebPackage("busybox-static", "1:1.35.0-4+deb12u1+b1", "amd64");
    private static final GuestFiles GUEST = guest("agent-1");
    private static final String JAVA = "Eclipse Adoptium 25.0.3+9-LTS";

    private static GuestFiles guest(String agent) {
        return new GuestFiles("init".getBytes(StandardCharsets.UTF_8), "launcher".getBytes(StandardCharsets.UTF_8),
                agent.getBytes(StandardCharsets.UTF_8), "guest".getBytes(StandardCharsets.UTF_8));
    }

    private static PartHashes hashes(DebPackage kernel, GuestFiles guest, String java) {
        return PartHashes.of(Recipe.STANDARD, kernel, BUSYBOX, guest, java);
    }

    @Test
    void theSameInputsAlwaysGiveTheSameHashes() {
        // Pinned: a change here means every user's cached image is rebuilt. Bump the recipe version instead.
        // Also computed independently: sha256 of (8-byte big-endian length, bytes) for "kind", "t", "a", "b".
        assertThat(ContentHash.of("t").add("a", "b").hex())
                .isEqualTo("63786b9010730978ffff1e20cb826f5171fa560a3557d26fe2b07ab34fbd8179");
        assertThat(hashes(KERNEL, GUEST, JAVA)).isEqualTo(hashes(KERNEL, GUEST, JAVA));
        assertThat(hashes(KERNEL, GUEST, JAVA).imageId()).matches("[0-9a-f]{16}");
    }

    @Test
    void aNewAgentJarRebuildsTheInitramfsOnly() {
        PartHashes before = hashes(KERNEL, GUEST, JAVA);
        PartHashes after = hashes(KERNEL, guest("agent-2"), JAVA);

        assertThat(after.kernel()).isEqualTo(before.kernel());
        assertThat(after.rootfs()).isEqualTo(before.rootfs());
        assertThat(after.initramfs()).isNotEqualTo(before.initramfs());
        assertThat(after.imageId()).isNotEqualTo(before.imageId());
    }

    @Test
    void aNewKernelPackageRebuildsTheKernelAndTheInitramfsThatCarriesItsModules() {
        PartHashes before = hashes(KERNEL, GUEST, JAVA);
        PartHashes after = hashes(new DebPackage("linux-image-6.1.0-58-amd64", "6.1.193-1", "amd64"), GUEST, JAVA);

        assertThat(after.kernel()).isNotEqualTo(before.kernel());
        assertThat(after.initramfs()).isNotEqualTo(before.initramfs());
        assertThat(after.rootfs()).isEqualTo(before.rootfs());
    }

    @Test
    void aCompilerInstalledLaterRebuildsTheKernelPartThatCarriesTheWorkspaceModule() {
        PartHashes without = PartHashes.of(Recipe.STANDARD, KERNEL, BUSYBOX, GUEST, JAVA, "make");
        PartHashes with = PartHashes.of(Recipe.STANDARD, KERNEL, BUSYBOX, GUEST, JAVA, "gcc-12 make");

        assertThat(with.kernel()).isNotEqualTo(without.kernel());
        assertThat(with.initramfs()).isNotEqualTo(without.initramfs());
        assertThat(with.rootfs()).isEqualTo(without.rootfs());
    }

    @Test
    void aLockedRootFilesystemIsItsOwnPartAndEachLockAnother() {
        PartHashes plain = PartHashes.of(Recipe.STANDARD, KERNEL, BUSYBOX, GUEST, JAVA, "make");
        PartHashes locked = PartHashes.of(Recipe.STANDARD, KERNEL, BUSYBOX, GUEST, JAVA, "make", "a".repeat(64));
        PartHashes other = PartHashes.of(Recipe.STANDARD, KERNEL, BUSYBOX, GUEST, JAVA, "make", "b".repeat(64));

        assertThat(PartHashes.of(Recipe.STANDARD, KERNEL, BUSYBOX, GUEST, JAVA, "make", null)).isEqualTo(plain);
        assertThat(locked.rootfs()).isNotEqualTo(plain.rootfs()).isNotEqualTo(other.rootfs());
        assertThat(locked.kernel()).isEqualTo(plain.kernel()); // the same kernel package: its part is reused
        assertThat(locked.initramfs()).isEqualTo(plain.initramfs());
        assertThat(locked.imageId()).isNotEqualTo(plain.imageId());
    }

    @Test
    void aNewJavaRebuildsTheRootFilesystemOnly() {
        PartHashes before = hashes(KERNEL, GUEST, JAVA);
        PartHashes after = hashes(KERNEL, GUEST, "Eclipse Adoptium 25.0.4+7-LTS");

        assertThat(after.rootfs()).isNotEqualTo(before.rootfs());
        assertThat(after.kernel()).isEqualTo(before.kernel());
        assertThat(after.initramfs()).isEqualTo(before.initramfs());
    }

    @Test
    void fieldBoundariesCannotBeShiftedToForgeAHash() {
        assertThat(ContentHash.of("k").add("a", "bc").hex()).isNotEqualTo(ContentHash.of("k").add("ab", "c").hex());
        assertThat(ContentHash.of("k").add("x", "").add("y", "z").hex())
                .isNotEqualTo(ContentHash.of("k").add("x", "y").add("", "z").hex());
    }
}
