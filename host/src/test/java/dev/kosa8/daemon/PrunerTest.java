package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.HostPaths;
import dev.kosa8.image.Image;
import dev.kosa8.image.ImageStore;
import dev.kosa8.image.TestImages;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kosa8 image prune} on real qcow2 chains (made by {@code qemu-img}, as
 * the daemon makes them): what no sandbox rests on goes, what one does stays.
 */
class PrunerTest {
    static final String OLD = "aaaaaaaaaaaaaaaa";
    static final String CURRENT = "bbbbbbbbbbbbbbbb";
    static final String UNUSED = "cccccccccccccccc";

    @TempDir
    Path home;
    HostPaths paths;
    Templates templates;
    ImageStore images;
    Image old;
    Image current;
    List<String> log = new ArrayList<>();

    @BeforeEach
    void images() throws Exception {
        paths = new HostPaths(home.resolve("data"), home.resolve("cache"), home.resolve("run"));
        old = TestImages.make(paths, OLD, false);
        TestImages.make(paths, UNUSED, false);
        current = TestImages.make(paths, CURRENT, true);
        templates = new Templates(paths, "qemu-system-x86_64", log::add);
        images = new ImageStore(paths);
    }

    static String shape(String image) {
        return new Templates.Shape(image, "tcg", 2, 512, false, false).name();
    }

    /** A committed template of {@code image}, named its shape's current one when {@code pointed}. */
    Path template(String image, Image of, String time, boolean pointed) throws Exception {
        Path root = paths.data().resolve("templates");
        Path dir = root.resolve(shape(image) + "-" + time);
        TestImages.overlay(dir.resolve("disk.qcow2"), of.rootfs());
        Files.writeString(dir.resolve("template.json"), "{\"bootImage\": \"" + image + "\"}");
        Files.createDirectories(dir.resolve("ram"));
        Files.write(dir.resolve("ram").resolve("template-" + dir.getFileName() + ".pages"), new byte[8192]);
        if (pointed) {
            Files.writeString(root.resolve(shape(image) + ".current"), dir.getFileName() + "\n");
        }
        return dir;
    }

    Path sandboxOn(String id, Path backing) throws Exception {
        Path disk = paths.sandboxes().resolve(id).resolve("root.qcow2");
        TestImages.overlay(disk, backing);
        return disk;
    }

    List<String> prune(List<Path> disks, boolean dryRun) {
        return Pruner.prune(images, templates, disks, dryRun).stream().map(i -> i.kind() + " " + i.name()).toList();
    }

    @Test
    void onlyWhatNoSandboxRestsOnAndNoNewSandboxWillUseGoes() throws Exception {
        Path oldPointed = template(OLD, old, "1", true);       // its image is no longer current
        Path oldInUse = template(OLD, old, "2", false);        // a sandbox rests on it
        Path superseded = template(CURRENT, current, "3", false);
        Path currentTemplate = template(CURRENT, current, "4", true);
        Path leftover = Files.createDirectories(paths.data().resolve("templates").resolve(".making-" + shape(CURRENT)));
        Path onTemplate = sandboxOn("s1", oldInUse.resolve("disk.qcow2"));
        Path onImage = sandboxOn("s2", current.rootfs());
        // a pack a sandbox's checkpoints link to: removing the template frees nothing of it
        Path pack = superseded.resolve("ram").resolve("template-" + superseded.getFileName() + ".pages");
        Files.createDirectories(paths.sandboxes().resolve("s2/checkpoints/ram"));
        Files.createLink(paths.sandboxes().resolve("s2/checkpoints/ram").resolve(pack.getFileName()), pack);
        List<Path> disks = List.of(onTemplate, onImage, paths.sandboxes().resolve("gone/root.qcow2"));

        List<String> expected = List.of("template " + leftover.getFileName(), "template " + oldPointed.getFileName(),
                "template " + superseded.getFileName(), "image " + UNUSED);
        assertThat(prune(disks, true)).as("a dry run").containsExactlyInAnyOrderElementsOf(expected);
        assertThat(oldPointed).exists();
        assertThat(images.list()).hasSize(3);

        long frees = Files.size(superseded.resolve("disk.qcow2")) + Files.size(superseded.resolve("template.json"));
        List<Pruner.Item> removed = Pruner.prune(images, templates, disks, false);
        assertThat(removed).extracting(i -> i.kind() + " " + i.name()).containsExactlyInAnyOrderElementsOf(expected);
        assertThat(removed).filteredOn(i -> i.name().equals(superseded.getFileName().toString())).singleElement()
                .extracting(Pruner.Item::bytes).as("its disk and json, not the linked pack").isEqualTo(frees);
        assertThat(oldPointed).doesNotExist();
        assertThat(paths.data().resolve("templates").resolve(shape(OLD) + ".current")).as("its pointer went with it")
                .doesNotExist();
        assertThat(superseded).doesNotExist();
        assertThat(leftover).doesNotExist();
        assertThat(oldInUse).exists();
        assertThat(currentTemplate).exists();
        assertThat(images.list()).extracting(Image::id).containsExactlyInAnyOrder(OLD, CURRENT);
        assertThat(old.rootfs()).as("the old image a kept template rests on").exists();
        assertThat(paths.sandboxes().resolve("s2/checkpoints/ram").resolve(pack.getFileName())).exists();

        assertThat(prune(disks, false)).as("nothing more while the sandbox is there").isEmpty();

        // once the sandbox on the old template is gone, the template goes, then its image
        Files.delete(onTemplate);
        assertThat(prune(disks, false)).containsExactlyInAnyOrder("template " + oldInUse.getFileName(), "image " + OLD);
        assertThat(images.list()).extracting(Image::id).containsExactly(CURRENT);
        assertThat(currentTemplate.resolve("disk.qcow2")).exists();
    }

    @Test
    void withoutACurrentImageNothingIsRemoved() throws Exception {
        Path stale = template(OLD, old, "1", false);
        Files.delete(paths.images().resolve("current"));

        assertThatThrownBy(() -> Pruner.prune(images, templates, List.of(), false))
                .hasMessageContaining("no current image").isInstanceOf(dev.kosa8.host.KosaException.class);
        assertThat(stale).exists();
        assertThat(images.list()).hasSize(3);
    }

    @Test
    void aSandboxRestingOnAnOldImageKeepsIt() throws Exception {
        Path disk = sandboxOn("s1", old.rootfs());

        assertThat(prune(List.of(disk), false)).containsExactly("image " + UNUSED);
        assertThat(images.list()).extracting(Image::id).containsExactlyInAnyOrder(OLD, CURRENT);
    }
}
