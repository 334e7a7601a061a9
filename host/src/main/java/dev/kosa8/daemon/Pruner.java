package dev.kosa8.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.HostCommand;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.Image;
import dev.kosa8.image.ImageStore;
import dev.kosa8.image.NamedImage;
import dev.kosa8.image.StepStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code kosa8 image prune}: removes the guest images and booted templates
 * that no new sandbox will use and no existing one does. Every image
 * rebuild leaves the last image (about 1 GB) and its templates behind;
 * kosa8 never removes them by itself, because a sandbox's disk is a qcow2
 * overlay whose backing file may be a template's disk, whose own backing
 * file is an image's root disk: removing either would break that sandbox.
 *
 * <p>What is kept: the current image; each shape's current template of the
 * current image; and every image or template some layer of some sandbox's
 * disk rests on (read with {@code qemu-img info --backing-chain}, running or
 * stopped sandboxes alike), with the image a kept template rests on.
 *
 * <p>One window is left open on purpose: a sandbox being created has its
 * template handed out before its disk exists; if in that moment a new image
 * became current and a prune ran, the template (no longer current, not yet
 * rested on) would go and that create would fail with qemu-img's error about
 * its backing file, to be retried. Closing it would mean holding the shape's
 * lock across disk creation for a race that needs an image build and a prune
 * within the same few milliseconds of a create.
 */
final class Pruner {
    /** What was removed (or in a dry run, would be): {@code kind} is "image" or "template". */
    record Item(String kind, String name, long bytes) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private Pruner() {
    }

    static List<Item> prune(ImageStore images, Templates templates, List<Path> sandboxDisks, boolean dryRun) {
        return prune(images, templates, sandboxDisks, List.of(), null, null, dryRun);
    }

    /**
     * As above, with the images users built or imported: each one's disk chain is kept (its layers, the system
     * image it rests on), and its current templates; the build cache's layers ({@code layers}, named by
     * {@code steps}) that neither a named image, a sandbox nor a kept template rests on are removed, with the
     * steps that name them.
     */
    static List<Item> prune(ImageStore images, Templates templates, List<Path> sandboxDisks, List<NamedImage> named,
                            StepStore steps, Path layers, boolean dryRun) {
        String current = images.currentId().orElseThrow(() -> new KosaException(KosaException.Kind.IMAGE,
                "there is no current image, so nothing can be told apart as old",
                "build one with `kosa8 image build`, then prune"));
        try {
            Set<Path> inUse = new HashSet<>();
            for (Path disk : sandboxDisks) {
                inUse.addAll(chain(disk));
            }
            Set<String> keptImages = new HashSet<>(List.of(current));
            Set<String> keptSystem = new HashSet<>(List.of(current));
            for (NamedImage n : named) {
                inUse.addAll(chain(Path.of(n.disk())));
                keptImages.add(n.id());
                keptSystem.add(n.systemImage());
            }
            List<Item> removed = new ArrayList<>();
            List<Path> keptTemplates = new ArrayList<>();
            for (Templates.Pruned t : templates.prune(keptImages, inUse, dryRun, keptTemplates)) {
                removed.add(new Item("template", t.name(), t.bytes()));
            }
            for (Path disk : keptTemplates) {
                inUse.addAll(chain(disk));
            }
            if (steps != null && layers != null && Files.isDirectory(layers)) {
                removed.addAll(pruneLayers(steps, layers, inUse, dryRun));
            }
            for (Image i : images.list()) {
                if (keptSystem.contains(i.id())
                        || (Files.exists(i.rootfs()) && inUse.contains(i.rootfs().toRealPath()))) {
                    continue;
                }
                removed.add(new Item("image", i.id(), images.bytesOnlyIn(i.id())));
                if (!dryRun) {
                    images.remove(i.id());
                }
            }
            return removed;
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot prune images and templates: " + e.getMessage(),
                    "check the permissions of kosa8's data folder; nothing a sandbox uses was removed", e);
        }
    }

    /** The build layers nothing rests on, and the cached steps that name them. */
    private static List<Item> pruneLayers(StepStore steps, Path layers, Set<Path> inUse, boolean dryRun)
            throws IOException {
        List<Item> removed = new ArrayList<>();
        Set<Path> keptDirs = new HashSet<>();
        for (Path p : inUse) {
            keptDirs.add(p.getParent());
        }
        List<Path> dirs;
        try (var list = Files.list(layers)) {
            dirs = list.filter(Files::isDirectory).sorted().toList();
        }
        Set<Path> gone = new HashSet<>();
        for (Path d : dirs) {
            if (keptDirs.contains(d.toRealPath())) {
                continue;
            }
            long bytes = 0;
            try (var files = Files.list(d)) {
                for (Path f : files.toList()) {
                    bytes += Files.size(f);
                }
            }
            removed.add(new Item("layer", d.getFileName().toString(), bytes));
            gone.add(d.toRealPath());
            if (!dryRun) {
                steps.remove(d);
            }
        }
        for (var r : steps.list()) {
            Path dir = Path.of(r.disk()).getParent();
            boolean stepGone = gone.contains(dir) || !Files.exists(dir);
            if (stepGone && !dryRun) {
                steps.remove(steps.directory(r.key()));
            }
        }
        return removed;
    }

    /**
     * Every file of a disk's backing chain, itself first, as real paths. A
     * disk that does not exist has none; one {@code qemu-img} cannot read
     * stops the prune, since what it rests on is then unknown.
     */
    static List<Path> chain(Path disk) throws IOException {
        if (!Files.exists(disk)) {
            return List.of();
        }
        String out = HostCommand.of("qemu-img", "info", "-U", "--backing-chain", "--output=json", disk.toString())
                .run(KosaException.Kind.VM, "reading the backing chain of " + disk);
        JsonNode layers = JSON.readTree(out);
        List<Path> files = new ArrayList<>();
        for (JsonNode layer : layers.isArray() ? layers : List.of(layers)) {
            Path f = Path.of(layer.path("filename").asText());
            files.add(Files.exists(f) ? f.toRealPath() : f.toAbsolutePath().normalize());
        }
        return files;
    }
}
