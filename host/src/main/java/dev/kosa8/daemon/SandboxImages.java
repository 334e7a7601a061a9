package dev.kosa8.daemon;

import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.Image;
import dev.kosa8.image.ImageConfig;
import dev.kosa8.image.ImageStore;
import dev.kosa8.image.NamedImage;
import dev.kosa8.image.NamedImages;
import dev.kosa8.image.oci.ImageImport;
import dev.kosa8.image.oci.ImportLimits;
import dev.kosa8.image.oci.RegistryPull;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The images sandboxes are made from, for the API: listed, shown, removed,
 * imported from an archive, pulled from a registry, and built from
 * Dockerfiles ({@link ImageBuilds}, whose lock an import waits for no more
 * than a build or prune does).
 */
final class SandboxImages {
    private final HostPaths paths;
    private final BootImages bootImages;
    private final ImageBuilds builds;
    private final Consumer<String> log;

    SandboxImages(HostPaths paths, BootImages bootImages, ImageBuilds builds, Consumer<String> log) {
        this.paths = paths;
        this.bootImages = bootImages;
        this.builds = builds;
        this.log = log;
    }

    /**
     * The images sandboxes can be made from: kosa8's own (the current system image) first, then those built or
     * imported, newest first. Each: name, id, size, base, created, config.
     */
    List<Map<String, Object>> list() {
        List<Map<String, Object>> out = new ArrayList<>();
        new ImageStore(paths).current().ifPresent(i -> out.add(imageView(NamedImage.DEFAULT, i.id(), i.sizeBytes(),
                "debian bookworm (mmdebstrap)", created(i), ImageConfig.NONE, i.rootfs().toString())));
        for (NamedImage i : new NamedImages(paths.images()).list()) {
            out.add(imageView(i.name(), i.id(), i.sizeBytes(), i.base(), i.created(), i.config(), i.disk()));
        }
        return out;
    }

    /** One image's view, by name or id. */
    Map<String, Object> image(String name) {
        if (BootImages.isDefault(name)) {
            return list().stream().filter(v -> v.get("name").equals(NamedImage.DEFAULT)).findFirst()
                    .orElseThrow(() -> new KosaException(KosaException.Kind.IMAGE, "kosa8's own image is not built",
                            "build it with `kosa8 image build`"));
        }
        NamedImage i = bootImages.named(name).orElseThrow();
        Map<String, Object> v = imageView(i.name(), i.id(), i.sizeBytes(), i.base(), i.created(), i.config(),
                i.disk());
        v.put("systemImage", i.systemImage());
        v.put("step", i.step());
        return v;
    }

    /**
     * Forgets an image's name; its layers stay until a prune finds nothing resting on them (sandboxes made from
     * it keep working). kosa8's own image cannot be removed this way.
     */
    String remove(String name) {
        if (BootImages.isDefault(name)) {
            throw new KosaException(KosaException.Kind.USAGE, NamedImage.DEFAULT + " is kosa8's own image",
                    "`kosa8 image prune` removes old builds of it");
        }
        NamedImage i = bootImages.named(name).orElseThrow();
        try {
            new NamedImages(paths.images()).remove(i.name());
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot remove image " + name + ": " + e.getMessage(),
                    "check the permissions of kosa8's data folder", e);
        }
        return i.name();
    }

    private static String created(Image i) {
        try {
            return Files.getLastModifiedTime(i.directory()).toInstant().toString();
        } catch (IOException e) {
            return "";
        }
    }

    private static Map<String, Object> imageView(String name, String id, long size, String base, String created,
                                                 ImageConfig config, String disk) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("name", name);
        v.put("id", id);
        v.put("sizeBytes", size);
        v.put("base", base);
        v.put("created", created);
        v.put("config", config);
        v.put("disk", disk);
        return v;
    }

    /**
     * Imports an OCI or {@code docker save} archive as a named image ({@link ImageImport}),
     * booted by the current system image's kernel and initramfs. One at a time with builds and prunes.
     *
     * @param archive an absolute path: a tar file or an OCI layout folder
     * @param tag     the name to list it under; empty: the archive's own
     */
    Map<String, Object> importImage(String archive, String tag) {
        if (archive.isEmpty() || !Path.of(archive).isAbsolute()) {
            throw new KosaException(KosaException.Kind.USAGE, "the archive must be an absolute path", "");
        }
        return importArchive(Path.of(archive), tag, null);
    }

    /**
     * Pulls an image from a registry ({@link RegistryPull}) and imports it as {@link
     * #importImage} does; the archive it is pulled into is deleted whatever happens.
     *
     * @param tag the name to list it under; empty: its repository and tag
     */
    Map<String, Object> pull(String reference, String tag) {
        return importArchive(null, tag.isEmpty() ? RegistryPull.defaultName(reference) : tag,
                reference);
    }

    private Map<String, Object> importArchive(Path given, String tag, String pull) {
        String system = new ImageStore(paths).currentId().orElseThrow(() -> new KosaException(
                KosaException.Kind.IMAGE, "kosa8's own image is not built, and it boots imported ones",
                "build it with `kosa8 image build`"));
        if (!builds.lock().tryLock()) {
            throw new KosaException(KosaException.Kind.STATE, "an image build or prune is running",
                    "import once it is done");
        }
        try {
            Path logs = Files.createDirectories(paths.images().resolve("logs"));
            Path logFile = logs.resolve("import-" + Instant.now().toString().replace(":", "") + ".log");
            Path archive = given;
            if (pull != null) {
                Path work = Files.createDirectories(paths.images().resolve("import"));
                archive = work.resolve(".pull-" + SandboxIds.newId() + ".tar");
                RegistryPull.toArchive(pull, archive, paths.cache().resolve("registry"), null,
                        log);
            }
            ImageImport.Result r;
            try {
                r = ImageImport.run(archive, tag, paths.images(), system,
                        ImportLimits.DEFAULT, logFile);
            } finally {
                if (pull != null) {
                    Files.deleteIfExists(archive);
                }
            }
            log.accept((pull != null ? "pulled " + pull : "imported " + archive) + " as " + r.image().name() + " (" + r.image().id() + "): "
                    + r.layers() + " layers, " + r.unpackedBytes() + " bytes unpacked in " + r.took().toMillis()
                    + " ms");
            Map<String, Object> v = image(r.image().name());
            v.put("layers", r.layers());
            v.put("unpackedBytes", r.unpackedBytes());
            v.put("millis", r.took().toMillis());
            return v;
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.IMAGE, "cannot import " + (pull != null ? pull : given)
                    + ": " + e.getMessage(),
                    "check that the file is readable and that kosa8's data folder has room", e);
        } finally {
            builds.lock().unlock();
        }
    }

    /** Image builds from Dockerfiles. */
    ImageBuilds builds() {
        return builds;
    }
}
