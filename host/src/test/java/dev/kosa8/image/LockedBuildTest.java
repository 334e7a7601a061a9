package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import dev.kosa8.image.debian.LockFile;
import dev.kosa8.image.debian.Locked;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A lock is checked against this kosa8's recipe before anything is fetched, each refusal saying what to do. */
class LockedBuildTest {
    private static Locked locked(String name, String arch, char hash) {
        return new Locked(name, "1.0-1", arch, String.valueOf(hash).repeat(64), 10, "debian",
                "pool/main/x/" + name + "_1.0-1_" + arch + ".deb");
    }

    private static List<Locked> rootfs(char hash) {
        List<Locked> out = new ArrayList<>();
        for (String n : Recipe.STANDARD.includes()) {
            out.add(locked(n, "amd64", hash));
        }
        out.add(locked("libc6", "amd64", hash));
        return out;
    }

    private static final Map<String, Locked> PARTS = Map.of("kernel", locked("linux-image-6.1.0-41-amd64", "amd64",
            'e'), "busybox", locked("busybox-static", "amd64", 'f'));
    private static final String SUITE = "suite bookworm, minbase, includes " + String.join(",",
            Recipe.STANDARD.includes());

    private static LockedBuild build(List<String> comments, List<Locked> packages, Map<String, Locked> parts) {
        return new LockedBuild(new LockFile(comments, packages, parts), "the.lock");
    }

    @Test
    void aWholeImagesLockOfThisRecipePassesAndNamesItsKernelAndBusybox() {
        LockedBuild b = build(List.of(SUITE), rootfs('a'), PARTS);
        b.check(Recipe.STANDARD);
        assertThat(b.kernel()).isEqualTo(new DebPackage("linux-image-6.1.0-41-amd64", "1.0-1", "amd64"));
        assertThat(b.busybox().name()).isEqualTo("busybox-static");
        assertThat(b.rootfs().parts()).isEmpty();
        assertThat(b.rootfs().packages()).hasSize(Recipe.STANDARD.includes().size() + 1);
        assertThat(b.command()).isEqualTo("image build --from-lock the.lock"); // as the root-needed message quotes it
        assertThat(LockedBuild.recorded(b.lock(), "0123456789abcdef").command()).isEqualTo("image ensure");
    }

    @Test
    void theDigestFollowsEveryFileOfTheRootFilesystemAndNothingElse() {
        String a = build(List.of(SUITE), rootfs('a'), PARTS).digest();
        List<Locked> oneChanged = rootfs('a');
        oneChanged.set(3, locked(oneChanged.get(3).name(), "amd64", 'b'));
        assertThat(build(List.of(SUITE), oneChanged, PARTS).digest()).isNotEqualTo(a);
        assertThat(build(List.of(SUITE, "another comment"), rootfs('a'), Map.of("kernel",
                locked("linux-image-x", "amd64", '0'), "busybox", PARTS.get("busybox"))).digest()).isEqualTo(a);
    }

    @Test
    void eachLockThisRecipeCannotBuildIsRefusedNamingWhy() {
        assertThatThrownBy(() -> build(List.of(SUITE), rootfs('a'), Map.of()).check(Recipe.STANDARD))
                .isInstanceOf(KosaException.class).hasMessageContaining("names no kernel package")
                .satisfies(e -> assertThat(((KosaException) e).suggestion()).contains("kosa8 image lock"));
        assertThatThrownBy(() -> build(List.of("suite trixie, minbase"), rootfs('a'), PARTS).check(Recipe.STANDARD))
                .isInstanceOf(KosaException.class).hasMessageContaining("was not locked from Debian bookworm");
        List<Locked> noGit = rootfs('a').stream().filter(p -> !p.name().equals("git")).toList();
        assertThatThrownBy(() -> build(List.of(SUITE), noGit, PARTS).check(Recipe.STANDARD))
                .isInstanceOf(KosaException.class).hasMessageContaining("has no git");
        List<Locked> arm = new ArrayList<>(rootfs('a'));
        arm.add(locked("libfoo", "arm64", 'c'));
        assertThatThrownBy(() -> build(List.of(SUITE), arm, PARTS).check(Recipe.STANDARD))
                .isInstanceOf(KosaException.class).hasMessageContaining("libfoo for arm64");
        List<Locked> dashed = new ArrayList<>(rootfs('a'));
        dashed.add(new Locked("-oAPT::x", "1", "amd64", "c".repeat(64), 1, "debian", "pool/main/x/x_1_amd64.deb"));
        assertThatThrownBy(() -> build(List.of(SUITE), dashed, PARTS).check(Recipe.STANDARD))
                .isInstanceOf(KosaException.class).hasMessageContaining("names a package Debian could not");
        List<Locked> percent = new ArrayList<>(rootfs('a'));
        percent.add(new Locked("libx", "1", "amd64", "c".repeat(64), 1, "debian", "pool/main/x/x%zz_1_amd64.deb"));
        assertThatThrownBy(() -> build(List.of(SUITE), percent, PARTS).check(Recipe.STANDARD))
                .isInstanceOf(KosaException.class).hasMessageContaining("names a package Debian could not");
        List<Locked> twice = new ArrayList<>(rootfs('a'));
        twice.add(new Locked("libc6", "2.0-1", "amd64", "d".repeat(64), 10, "debian", "pool/main/x/libc6_2_amd64.deb"));
        assertThatThrownBy(() -> build(List.of(SUITE), twice, PARTS).check(Recipe.STANDARD))
                .isInstanceOf(KosaException.class).hasMessageContaining("twice");
        assertThatThrownBy(() -> build(List.of(SUITE), rootfs('a'), Map.of("kernel", PARTS.get("kernel"),
                "busybox", locked("busybox", "amd64", 'f'))).check(Recipe.STANDARD))
                .isInstanceOf(KosaException.class).hasMessageContaining("kernel or busybox line names another");
    }
}
