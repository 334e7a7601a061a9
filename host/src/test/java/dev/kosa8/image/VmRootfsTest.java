package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import dev.kosa8.image.debian.LockFile;
import dev.kosa8.image.debian.Locked;
import dev.kosa8.vm.Accelerator;
import dev.kosa8.vm.GuestArch;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class VmRootfsTest {
    private static final LockFile LOCK = new LockFile(List.of(), List.of(
            new Locked("tini", "0.19.0-1", "amd64", "ab".repeat(32), 10, "debian", "pool/main/t/tini/tini_0.19.0-1_amd64.deb")));

    /** What a real {@code sh} makes of {@code script}'s words: printf prints each, ended by a NUL. */
    private static List<String> shWords(String quoted) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", "printf '%s\\0' " + quoted).start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor()).isZero();
        String s = new String(out, StandardCharsets.UTF_8);
        return Arrays.asList(s.substring(0, s.length() - 1).split("\0", -1));
    }

    @Test
    void everyWordReachesTheShellAsItIs() throws Exception {
        List<String> words = List.of("plain", "two words", "it's", "\"$1\"/var/cache/*.deb", "back\\slash",
                "$(reboot)", "`id`", "line\nbreak", "", "'''");
        assertThat(shWords(VmRootfs.quote(words))).containsExactlyElementsOf(words);
    }

    @Test
    void theBuildScriptRunsMmdebstrapAsTheHostBuildDoesThenMakesTheDiskAndHandsBack() throws Exception {
        String script = VmRootfs.buildScript(Recipe.STANDARD, LOCK, List.of("tini"));
        List<String> host = RootfsPart.mmdebstrapFromRepo(Recipe.STANDARD, LOCK, Path.of("/in/repo"), Path.of("/target"));
        int from = script.indexOf("'mmdebstrap'");
        String line = script.substring(from, script.indexOf("\necho 'kosa8-builder: kosa8", from)); // hooks span lines
        assertThat(shWords(line)).containsExactlyElementsOf(host);
        assertThat(host).contains("deb [trusted=yes] copy:///in/repo ./", "/target", "--include=tini");
        String mke2fs = "mke2fs -q -t ext4 -F -L kosa8-root -d /target \"$KOSA8_OUT\"";
        String handBack = "tar -cf \"$KOSA8_BACK\" -C /target " + VmRootfs.BUNDLE + " " + VmRootfs.DPKG_STATUS;
        assertThat(script).contains(mke2fs, handBack);
        assertThat(script.indexOf(handBack)).as("the hand-back comes last: it means every step succeeded")
                .isGreaterThan(script.indexOf(mke2fs));
        assertThat(script)
                .contains("command -v mmdebstrap > /dev/null || { echo 'the builder has no mmdebstrap'; exit 1; }")
                .contains("tar -C /in/root -cf - . | tar -C /target --no-overwrite-dir -xpf -")
                .doesNotContain("cp -a")
                .contains("-cp /in/classes dev.kosa8.image.GuestTrustStore /target/" + VmRootfs.BUNDLE
                        + " /target" + JavaTrustStore.GUEST_PATH);
        Process syntax = new ProcessBuilder("sh", "-n", "-c", script).redirectErrorStream(true).start();
        assertThat(syntax.waitFor()).as(new String(syntax.getInputStream().readAllBytes())).isZero();
    }

    @Test
    void theModulesBuildRunsKbuildAgainstTheHeadersAtTheirOwnPathAndHandsTheModuleBack() throws Exception {
        String script = VmModule.buildScript("linux-headers-6.1.0-57-amd64", "gcc-12");
        String make = script.lines().filter(l -> l.startsWith("'make'")).findFirst().orElseThrow();
        assertThat(shWords(make)).containsExactly("make", "-C", "/usr/src/linux-headers-6.1.0-57-amd64", "M=/in/src",
                "CC=gcc-12", "modules");
        assertThat(VmModule.tools("gcc-12")).containsExactly("gcc-12", "make", "libelf1"); // objtool links libelf
        assertThat(VmModule.recipe()).startsWith("builder VM ").isEqualTo(VmModule.recipe());
        assertThat(script.indexOf("command -v awk > /dev/null || ln -s mawk /usr/bin/awk"))
                .as("kbuild's awk, linked before make").isPositive().isLessThan(script.indexOf("'make'"));
        assertThat(script).contains("strip --strip-debug /in/src/kosa8_ws9p.ko",
                "tar -cf \"$KOSA8_BACK\" -C /in/src kosa8_ws9p.ko");
        Process syntax = new ProcessBuilder("sh", "-n", "-c", script).redirectErrorStream(true).start();
        assertThat(syntax.waitFor()).as(new String(syntax.getInputStream().readAllBytes())).isZero();
    }

    @Test
    void theHandBackDiskIsReadAsATarWithEachFileBounded(@TempDir Path dir) throws Exception {
        Path disk = dir.resolve("back.img");
        writeTar(disk, Map.of(VmRootfs.BUNDLE, "PEM".getBytes(), VmRootfs.DPKG_STATUS, "Package: tini\n".getBytes()));
        Map<String, byte[]> back = BuilderRun.handedBack(disk);
        assertThat(back).containsOnlyKeys(VmRootfs.BUNDLE, VmRootfs.DPKG_STATUS);
        assertThat(new String(back.get(VmRootfs.DPKG_STATUS))).isEqualTo("Package: tini\n");

        Map<String, byte[]> many = new java.util.HashMap<>();
        for (int i = 0; i <= BuilderRun.MAX_HANDED_BACK_FILES; i++) {
            many.put("f" + i, new byte[1]);
        }
        writeTar(disk, many);
        assertThatThrownBy(() -> BuilderRun.handedBack(disk)).isInstanceOf(KosaException.class)
                .hasMessageContaining("more than " + BuilderRun.MAX_HANDED_BACK_FILES + " files");

        writeTar(disk, Map.of(VmRootfs.BUNDLE, new byte[BuilderRun.MAX_HANDED_BACK + 1]));
        assertThatThrownBy(() -> BuilderRun.handedBack(disk)).isInstanceOf(KosaException.class)
                .hasMessageContaining("handed back " + VmRootfs.BUNDLE + " of more than 16 MiB");
    }

    /** A tar as the builder's {@code tar -cf /dev/vdc} leaves it: the archive, then the disk's zeros. */
    private static void writeTar(Path disk, Map<String, byte[]> files) throws Exception {
        try (OutputStream raw = Files.newOutputStream(disk); TarArchiveOutputStream tar = new TarArchiveOutputStream(raw)) {
            for (var f : files.entrySet()) {
                TarArchiveEntry e = new TarArchiveEntry(f.getKey());
                e.setSize(f.getValue().length);
                tar.putArchiveEntry(e);
                tar.write(f.getValue());
                tar.closeArchiveEntry();
            }
            tar.finish();
            raw.write(new byte[1 << 20]);
        }
    }

    @Test
    void sizesAreReadAsMke2fsReadsThem() {
        assertThat(VmRootfs.bytes("4G")).isEqualTo(4L << 30);
        assertThat(VmRootfs.bytes("512M")).isEqualTo(512L << 20);
        assertThat(VmRootfs.bytes("4096")).isEqualTo(4096L << 10); // mke2fs: no suffix is KiB
        for (String bad : List.of("", "4GB", "-1G", "G", "4 G")) {
            assertThatThrownBy(() -> VmRootfs.bytes(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("not a disk size mke2fs reads");
        }
    }

    @Test
    void theBuilderMachineHasNoNetworkItsInputReadOnlyAndEveryDiskNamedBySerial() {
        List<String> argv = BuilderVm.argv("qemu", GuestArch.AMD64, Accelerator.TCG, new BuilderVm.Machine(Path.of("/k/vmlinux"),
                Path.of("/k/b.cpio"), Path.of("/w/builder-root.tar"), Path.of("/w/in.tar"), Path.of("/w/raw,img"), Path.of("/w/back.img")), 2);
        String line = String.join(" ", argv);
        assertThat(argv).doesNotContain("-netdev", "-nic", "-net").contains("-nodefaults", "-no-reboot");
        assertThat(line).contains("-sandbox on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny")
                .contains("id=root,file=/w/builder-root.tar,format=raw,if=none,readonly=on")
                .contains("virtio-blk-device,drive=root,serial=kosa8-builder-root")
                .contains("id=in,file=/w/in.tar,format=raw,if=none,readonly=on")
                .contains("virtio-blk-device,drive=in,serial=kosa8-builder-in")
                .contains("id=out,file=/w/raw,,img,format=raw") // a comma in a path is doubled for QEMU
                .contains("virtio-blk-device,drive=out,serial=kosa8-builder-out")
                .contains("virtio-blk-device,drive=back,serial=kosa8-builder-back")
                .contains("-initrd /k/b.cpio").contains("-m " + BuilderVm.MEMORY_MIB + "M");
    }

    @Test
    void anArm64BuilderRunsOnVirtWithItsConsoleAndNoTscArguments() {
        List<String> argv = BuilderVm.argv("qemu-system-aarch64", GuestArch.ARM64, Accelerator.TCG,
                new BuilderVm.Machine(Path.of("/k/vmlinux"), Path.of("/k/b.cpio"), Path.of("/w/r.tar"),
                        Path.of("/w/in.tar"), Path.of("/w/raw.img"), Path.of("/w/back.img")), 2);
        assertThat(argv).containsSequence("-M", "virt,gic-version=max").containsSequence("-cpu", "max,pauth=off")
                .containsSequence("-append", "console=ttyAMA0 panic=-1 quiet");
    }

    @Test
    void anArm64ImagesJavaIsDebiansPackageLinkedWhereTheLauncherLooks() {
        String script = VmRootfs.buildScript(Recipe.ARM64, LOCK, List.of("tini"));
        assertThat(script).contains("ln -sfn '../../usr/lib/jvm/java-25-openjdk-arm64' /target/opt/kosa8/jre")
                .contains("[ -x '/target/usr/lib/jvm/java-25-openjdk-arm64/bin/java' ] ||");
        assertThat(script).as("Debian's runtime runs in the tree as its root, its /proc gone before mke2fs")
                .contains("chroot /target /opt/kosa8/jre/bin/java -Xshare:off -XX:-UsePerfData -cp /tmp/kosa8-trust")
                .contains("/etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/java/cacerts");
        assertThat(script.indexOf("ln -sfn '../../usr/lib/jvm")).as("linked before the trust store is made with it")
                .isLessThan(script.indexOf("chroot /target"));
        assertThat(script.indexOf("umount /target/proc")).isGreaterThan(script.indexOf("chroot /target"))
                .isLessThan(script.indexOf("mke2fs"));
        assertThat(VmRootfs.buildScript(Recipe.STANDARD, LOCK, List.of("tini"))).as("x86-64's is jlink'ed in")
                .doesNotContain("/usr/lib/jvm");
    }

    @Test
    void theBuilderIsChosenByTheEnvironmentElseMmdebstrapWhereItCanRun() {
        assertThat(RootfsBuilder.choose(Map.of(), true, t -> true)).isEqualTo(RootfsBuilder.HOST);
        assertThat(RootfsBuilder.choose(Map.of(), false, t -> true)).isEqualTo(RootfsBuilder.VM);
        assertThat(RootfsBuilder.choose(Map.of(), true, t -> false)).isEqualTo(RootfsBuilder.VM);
        assertThat(RootfsBuilder.choose(Map.of(RootfsBuilder.ENVIRONMENT, "vm"), true, t -> true))
                .isEqualTo(RootfsBuilder.VM);
        assertThat(RootfsBuilder.choose(Map.of(RootfsBuilder.ENVIRONMENT, " VM "), true, t -> true))
                .isEqualTo(RootfsBuilder.VM);
        assertThat(RootfsBuilder.choose(Map.of(RootfsBuilder.ENVIRONMENT, "host"), false, t -> false))
                .isEqualTo(RootfsBuilder.HOST);
        RootfsBuilder.VM.requireUsable(false, true, "image build");
        RootfsBuilder.HOST.requireUsable(true, false, "image build");
        assertThatThrownBy(() -> RootfsBuilder.VM.requireUsable(true, false, "image build"))
                .isInstanceOf(KosaException.class).hasMessageContaining("needs kosa8's own archive client");
        assertThatThrownBy(() -> RootfsBuilder.HOST.requireUsable(false, true, "image build --from-lock x"))
                .isInstanceOf(KosaException.class).hasMessageContaining("needs root")
                .satisfies(e -> assertThat(((KosaException) e).suggestion()).contains("kosa8 image build --from-lock x")
                        .contains("unset KOSA8_IMAGE_BUILDER"));
        // the module: the builder VM may build it unless told to build on the host, whoever runs kosa8
        assertThat(RootfsBuilder.mayBuildModule(Map.of())).isTrue();
        assertThat(RootfsBuilder.mayBuildModule(Map.of(RootfsBuilder.ENVIRONMENT, "vm"))).isTrue();
        assertThat(RootfsBuilder.mayBuildModule(Map.of(RootfsBuilder.ENVIRONMENT, "Host"))).isFalse();
        assertThatThrownBy(() -> RootfsBuilder.choose(Map.of(RootfsBuilder.ENVIRONMENT, "docker"), true, t -> true))
                .isInstanceOf(KosaException.class).hasMessageContaining("KOSA8_IMAGE_BUILDER=docker");
    }
}
