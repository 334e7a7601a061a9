package dev.kosa8.daemon;

import dev.kosa8.egress.EgressService;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.checkpoint.ram.RamStore;
import dev.kosa8.host.FileTrees;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.vm.SavedMachine;
import dev.kosa8.vm.VmSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Booted templates of the image, so that {@code create} restores a machine
 * instead of booting one (issue 6): a guest booted once up to its agent's
 * Hello, saved (RAM and devices: its pages, {@link RamStore}) with its root disk
 * ({@code disk.qcow2}, an overlay of the image, read-only from then on).
 * A new sandbox's disk is an overlay of that disk, and a fresh QEMU loads
 * the saved machine (docs/checkpoints.md, "Templates").
 *
 * <p>A migration stream fits only a machine with the same devices, memory
 * and CPUs, so there is one template per {@link Shape}. The first sandbox of
 * a shape builds it (a cold boot, then about a second to save it); the
 * template is made under a lock per shape in a directory of its own,
 * committed by renaming it and then pointing {@code <shape>.current} at it,
 * so a half-made one is never used. A template is never moved, and deleted
 * only by {@code kosa8 image prune} ({@link #prune}) once no sandbox's disk
 * rests on it: sandboxes made from it read its disk as their backing file.
 *
 * <p>What the guest's init does per sandbox at boot is done again after the
 * restore: the sandbox's CA replaces the template's in the guest's trust
 * stores ({@link GuestTrust}); the clock is set and the random generator
 * reseeded as after a rewind. The host name is the same for all sandboxes.
 */
final class Templates {
    /** What a template must share with the sandboxes made from it: everything the migration stream depends on. */
    record Shape(String imageId, String accelerator, int cpus, int memoryMiB, boolean net, boolean workspace) {
        String name() {
            return imageId + "-" + accelerator + "-c" + cpus + "-m" + memoryMiB + (net ? "-net" : "")
                    + (workspace ? "-ws" : "");
        }
    }

    /**
     * A committed template: the disk to put an overlay on, the machine to
     * load, and where its RAM is kept as pages ({@code ramId} in {@code dir},
     * {@link RamStore}), or null for a template kept as one stream (made
     * before pages, or a stream {@link RamStore} did not take apart).
     *
     * @param trustLaidOut its guest has the places a sandbox's CA goes, so each sandbox's CA is written there as
     *                     files ({@link GuestTrust#install}); false for a template without a network, or made before
     */
    record Template(Path dir, Path disk, SavedMachine machine, Path console, String ramId, boolean trustLaidOut) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private final Path root;
    private final Consumer<String> log;
    private final Map<String, Object> locks = new ConcurrentHashMap<>();
    private final TemplateRehearsals rehearsals;
    private final TemplateMaker maker;

    Templates(HostPaths paths, String qemuBinary, Consumer<String> log) {
        this(paths, qemuBinary, java.util.function.UnaryOperator.identity(), null, log);
    }

    /**
     * @param confine puts a template's machine in the jail, with the console limit, the sandboxes' machines have
     * @param egress  where a template with a network rehearses its downloads ({@link TemplateRehearsals#network});
     *                null: it does not
     */
    Templates(HostPaths paths, String qemuBinary, java.util.function.UnaryOperator<VmSpec> confine,
              EgressService egress, Consumer<String> log) {
        this.rehearsals = new TemplateRehearsals(egress, log);
        this.root = paths.data().resolve("templates");
        this.log = log;
        this.maker = new TemplateMaker(root, paths.runtime().resolve("templates"), qemuBinary, confine, rehearsals,
                log);
    }

    /** The template of this shape, made first if there is none yet. */
    Template obtain(Shape shape, BootImage image, Duration bootTimeout) {
        synchronized (locks.computeIfAbsent(shape.name(), k -> new Object())) {
            Path dir = current(shape.name());
            if (dir == null || !Files.isRegularFile(dir.resolve("template.json"))) {
                dir = make(shape, image, bootTimeout);
            } else if (said(dir).path("rehearsals").asInt(0) < TemplateRehearsals.REHEARSALS
                    || unrehearsedNetwork(shape, dir)) {
                // made before its agent rehearsed its wake this often (template.json says how often, 0 if it does
                // not), or its network path at all: every sandbox of it would pay for that on each restore or first
                // download, so the shape gets a new one (the old one stays for the sandboxes made from it, and
                // serves on if the new one cannot be made)
                log.accept("template " + dir.getFileName() + " was made before its agent rehearsed its restore "
                        + TemplateRehearsals.REHEARSALS + " times, or before it rehearsed its network; making a new "
                        + "one");
                try {
                    dir = make(shape, image, bootTimeout);
                } catch (KosaException e) {
                    log.accept(e.getMessage() + "; " + dir.getFileName() + " serves meanwhile");
                }
            }
            return template(dir);
        }
    }

    /**
     * A template with a network made before templates rehearsed their downloads (its {@code template.json} has no
     * {@code netRehearsals}; one whose rehearsal failed says 0, and is not made again for it).
     */
    private boolean unrehearsedNetwork(Shape shape, Path dir) {
        return shape.net() && rehearsals.ofNetwork() && !said(dir).has("netRehearsals");
    }

    private static Template template(Path dir) {
        String ramId = ramId(dir);
        RamStore ram = new RamStore(dir);
        // a template made before it says so runs the script
        boolean laidOut = said(dir).path("trustLaidOut").asBoolean(false);
        return ram.has(ramId)
                ? new Template(dir, dir.resolve("disk.qcow2"), ram.open(ramId), dir.resolve("console.log"), ramId,
                        laidOut)
                : new Template(dir, dir.resolve("disk.qcow2"), SavedMachine.file(dir.resolve("machine.vmstate")),
                        dir.resolve("console.log"), null, laidOut);
    }

    /** What a template's {@code template.json} says; an empty object when it cannot be read. */
    private static com.fasterxml.jackson.databind.JsonNode said(Path dir) {
        try {
            return JSON.readTree(dir.resolve("template.json").toFile());
        } catch (IOException e) {
            return JSON.createObjectNode();
        }
    }

    /** The name of a template's RAM image and pack: unique among templates, never a checkpoint's id. */
    static String ramId(Path dir) {
        return "template-" + dir.getFileName();
    }

    /**
     * Stops using a template that could not be restored: the shape's
     * pointer goes, the next sandbox makes a new one. The template itself
     * stays where it is, since sandboxes made from it read its disk as their
     * backing file.
     */
    void discard(Shape shape) {
        synchronized (locks.computeIfAbsent(shape.name(), k -> new Object())) {
            try {
                Files.deleteIfExists(pointer(shape.name()));
            } catch (IOException e) {
                log.accept("cannot set aside template " + shape.name() + ": " + e.getMessage());
            }
        }
    }

    /** A template removed (or, in a dry run, that would be) and the bytes that frees. */
    record Pruned(String name, long bytes) {
    }

    /**
     * Removes the templates no new sandbox will be made from and no sandbox
     * is made from: every one but its shape's current template for a kept
     * image (the current system image, every named image), unless a disk in {@code inUse} (real paths: every layer
     * of every sandbox's disk) is its {@code disk.qcow2}; also what a make
     * that died left. Each shape's under its lock, so a template being made
     * or handed out is never touched.
     *
     * @param kept receives the {@code disk.qcow2} of every template kept
     * @return the templates removed, with the bytes that frees (files that are
     *         also linked elsewhere, like pages a sandbox's checkpoints share, free nothing)
     */
    List<Pruned> prune(java.util.Set<String> keptImageIds, java.util.Set<Path> inUse, boolean dryRun, List<Path> kept)
            throws IOException {
        List<Pruned> removed = new java.util.ArrayList<>();
        if (!Files.isDirectory(root)) {
            return removed;
        }
        List<Path> entries;
        try (var list = Files.list(root)) {
            entries = list.filter(Files::isDirectory).sorted().toList();
        }
        for (Path dir : entries) {
            String name = dir.getFileName().toString();
            boolean making = name.startsWith(".making-");
            String shape = making ? name.substring(".making-".length())
                    : name.lastIndexOf('-') > 0 ? name.substring(0, name.lastIndexOf('-')) : name;
            synchronized (locks.computeIfAbsent(shape, k -> new Object())) {
                if (!Files.isDirectory(dir)) {
                    continue;
                }
                Path disk = dir.resolve("disk.qcow2");
                boolean current = !making && dir.equals(current(shape))
                        && keptImageIds.contains(said(dir).path("bootImage").asText(""));
                boolean used = Files.exists(disk) && inUse.contains(disk.toRealPath());
                if (current || used) {
                    if (Files.exists(disk)) {
                        kept.add(disk.toRealPath());
                    }
                    continue;
                }
                removed.add(new Pruned(name, bytesFreed(dir)));
                if (!dryRun) {
                    if (dir.equals(current(shape))) {
                        Files.deleteIfExists(pointer(shape));
                    }
                    FileTrees.delete(dir);
                }
            }
        }
        return removed;
    }

    /** A template as {@code kosa8 df} lists it: its size on disk, its image, whether its shape uses it. */
    record Sized(String name, String imageId, boolean current, long bytes, Path disk) {
    }

    /** Every template on disk, with the bytes its folder holds (pages shared with checkpoints included). */
    List<Sized> sizes() {
        List<Sized> out = new java.util.ArrayList<>();
        if (!Files.isDirectory(root)) {
            return out;
        }
        try (var list = Files.list(root)) {
            for (Path dir : list.filter(Files::isDirectory).sorted().toList()) {
                String name = dir.getFileName().toString();
                if (name.startsWith(".making-")) {
                    continue;
                }
                String shape = name.lastIndexOf('-') > 0 ? name.substring(0, name.lastIndexOf('-')) : name;
                long bytes = dev.kosa8.host.LiveTreeBytes.of(dir);
                out.add(new Sized(name, said(dir).path("bootImage").asText(""), dir.equals(current(shape)), bytes,
                        dir.resolve("disk.qcow2")));
            }
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot list the templates in " + root + ": "
                    + e.getMessage(), "check the permissions of kosa8's data folder", e);
        }
        return out;
    }

    /** The bytes deleting a tree frees: its files not also linked elsewhere. */
    private static long bytesFreed(Path dir) throws IOException {
        return dev.kosa8.host.LiveTreeBytes.of(dir, true);
    }

    /** {@code <shape>.current} names the shape's template directory; each template has a directory of its own. */
    private Path pointer(String shape) {
        return root.resolve(shape + ".current");
    }

    /** Makes the shape's template ({@link TemplateMaker}) and points the shape at it. */
    private Path make(Shape shape, BootImage image, Duration bootTimeout) {
        return maker.make(shape, image, bootTimeout, pointer(shape.name()));
    }

    private Path current(String shape) {
        try {
            String name = Files.readString(pointer(shape)).strip();
            return name.matches("[A-Za-z0-9._-]+") ? root.resolve(name) : null;
        } catch (IOException e) {
            return null;
        }
    }

}
