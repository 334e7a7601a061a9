package dev.kosa8.image.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.HostCommand;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.NamedImages;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A whole import, no VM: the disk it writes, read back with debugfs, and nothing left by a refused one. */
class ImageImportTest {
    @TempDir
    Path tmp;

    @Test
    void anImportWritesTheRootAndKosa8sRuntimeApartAndListsTheImageOnlyOnceComplete() throws Exception {
        byte[] layer = new TestTar().dir("bin/").file("bin/tool", 0755, 0, 0, "#!x".getBytes()).bytes();
        byte[] cfg = TestImages.config(List.of(layer), List.of("/bin/tool"), "", "/", List.of("PATH=/bin"));
        Path archive = TestImages.write(tmp.resolve("a.tar"), TestImages.dockerArchive(List.of(layer), cfg, "t:1"));
        Path images = Files.createDirectory(tmp.resolve("images"));
        ImageImport.Result r = ImageImport.run(archive, "", images, "sys0", ImportLimits.DEFAULT, tmp.resolve("log"));
        assertThat(r.image().name()).isEqualTo("t:1");
        assertThat(new NamedImages(images).find("t:1")).isPresent();
        Path raw = tmp.resolve("raw");
        HostCommand.of("qemu-img", "convert", "-O", "raw", r.image().disk(), raw.toString())
                .run(KosaException.Kind.IMAGE, "test");
        String ls = HostCommand.of("debugfs", "-R", "ls -p /kosa8/lib", raw.toString())
                .run(KosaException.Kind.IMAGE, "test");
        assertThat(ls).contains("ld-linux-x86-64.so.2", "libc.so.6");
        String jre = HostCommand.of("debugfs", "-R", "stat /kosa8/jre/bin/java", raw.toString())
                .run(KosaException.Kind.IMAGE, "test");
        assertThat(jre).contains("Type: regular");
        String tool = HostCommand.of("debugfs", "-R", "stat /rootfs/bin/tool", raw.toString())
                .run(KosaException.Kind.IMAGE, "test");
        assertThat(tool).contains("Mode:  0755", "User:     0");
        try (Stream<Path> s = Files.list(images.resolve("import"))) {
            assertThat(s.toList()).as("no scratch folder is left").isEmpty();
        }
    }

    @Test
    void aRefusedImportListsNothingAndLeavesNoScratch() throws Exception {
        byte[] evil = new TestTar().file("ok", "x").symlink("up", "..").file("up/escape", "x").bytes();
        byte[] cfg = TestImages.config(List.of(evil), List.of(), "", "", List.of());
        Path archive = TestImages.write(tmp.resolve("e.tar"), TestImages.dockerArchive(List.of(evil), cfg, "e:1"));
        Path images = Files.createDirectory(tmp.resolve("images"));
        assertThatThrownBy(() -> ImageImport.run(archive, "", images, "sys0", ImportLimits.DEFAULT,
                tmp.resolve("log"))).isInstanceOf(KosaException.class)
                .hasMessageContaining("written through the symbolic link /up");
        assertThat(new NamedImages(images).list()).isEmpty();
        assertThat(tmp.resolve("escape")).doesNotExist();
        try (Stream<Path> s = Files.list(images.resolve("import"))) {
            assertThat(s.toList()).isEmpty();
        }
        assertThat(images.resolve("layers")).doesNotExist();
    }
}
