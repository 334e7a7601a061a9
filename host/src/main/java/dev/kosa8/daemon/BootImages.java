package dev.kosa8.daemon;

import dev.kosa8.host.KosaException;
import dev.kosa8.image.Image;
import dev.kosa8.image.ImageConfig;
import dev.kosa8.image.ImageStore;
import dev.kosa8.image.NamedImage;
import dev.kosa8.image.NamedImages;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import dev.kosa8.vm.GuestArch;

/**
 * What a sandbox boots: kosa8's own image ({@value NamedImage#DEFAULT}, the
 * current system image) or an image a user built or imported, by name — the
 * kernel and initramfs of the system image it was built on, its own root
 * disk. A build sandbox boots a step's disk instead, pinned here for its
 * lifetime ({@link #pin}); it never outlives the daemon.
 */
final class BootImages {
    private final Supplier<BootImage> system;
    private final Function<GuestArch, BootImage> otherArch;
    private final ImageStore systemImages;
    private final NamedImages named;
    private final Map<String, BootImage> pinned = new ConcurrentHashMap<>();

    /**
     * @param otherArch the current system image of another architecture's guests ({@link GuestArch#foreign}),
     *                  kept in that architecture's own store
     */
    BootImages(Supplier<BootImage> system, Function<GuestArch, BootImage> otherArch, ImageStore systemImages,
               NamedImages named) {
        this.system = system;
        this.otherArch = otherArch;
        this.systemImages = systemImages;
        this.named = named;
    }

    /**
     * The image a sandbox of this record boots. A sandbox whose image has been removed by name since still boots:
     * its disk is its own (and rests on the image's layers, which a prune keeps), so only the kernel and initramfs
     * matter, and the current system image's serve.
     */
    BootImage of(SandboxRecord r) {
        BootImage p = pinned.get(r.id());
        if (p != null) {
            return p;
        }
        if (r.image().arch().foreign()) {
            return otherArch.apply(r.image().arch()); // kosa8's own: named images are this host's architecture's
        }
        String name = r.image().name();
        if (!isDefault(name) && named.find(name).isEmpty()) {
            return system.get();
        }
        return of(name);
    }

    /** Whether this sandbox boots a pinned disk (a build sandbox): no template is made or used for it. */
    boolean isPinned(String sandboxId) {
        return pinned.containsKey(sandboxId);
    }

    void pin(String sandboxId, BootImage image) {
        pinned.put(sandboxId, image);
    }

    void unpin(String sandboxId) {
        pinned.remove(sandboxId);
    }

    /** The image of this name or id; a usage error naming it when there is none. */
    BootImage of(String name) {
        if (isDefault(name)) {
            return system.get();
        }
        NamedImage i = named.find(name).orElseThrow(() -> unknown(name));
        return boot(i);
    }

    /** The config commands of this image run with. */
    ImageConfig config(String name) {
        return isDefault(name) ? ImageConfig.NONE : named.find(name).orElseThrow(() -> unknown(name)).config();
    }

    /** The named image, or empty for kosa8's own. */
    java.util.Optional<NamedImage> named(String name) {
        return isDefault(name) ? java.util.Optional.empty()
                : java.util.Optional.of(named.find(name).orElseThrow(() -> unknown(name)));
    }

    BootImage boot(NamedImage i) {
        Image sys = systemImages.find(i.systemImage()).orElseThrow(() -> new KosaException(KosaException.Kind.IMAGE,
                "image " + i.name() + " was built on kosa8's system image " + i.systemImage() + ", which is gone",
                "build it again with `kosa8 image build`"));
        return new BootImage(i.id(), sys.vmlinux(), sys.initramfs(), Path.of(i.disk()),
                String.join(" ", sys.kernelCommandLine("sandbox")));
    }

    /** The system image a BootImage of the system store, by id. */
    BootImage system(String id) {
        Image sys = systemImages.find(id).orElseThrow(() -> new KosaException(KosaException.Kind.IMAGE,
                "kosa8's system image " + id + " is gone", "build it again with `kosa8 image build`"));
        return new BootImage(sys.id(), sys.vmlinux(), sys.initramfs(), sys.rootfs(),
                String.join(" ", sys.kernelCommandLine("sandbox")));
    }

    static boolean isDefault(String name) {
        return name == null || name.isEmpty() || name.equals(NamedImage.DEFAULT)
                || name.equals(NamedImage.DEFAULT + ":latest");
    }

    private static KosaException unknown(String name) {
        return new KosaException(KosaException.Kind.USAGE, "no image " + name,
                "list the images with `kosa8 image ls`; build one with `kosa8 image build -t " + name + " DIR`");
    }
}
