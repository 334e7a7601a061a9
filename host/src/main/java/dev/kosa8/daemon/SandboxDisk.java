package dev.kosa8.daemon;

import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.ImageStore;
import dev.kosa8.image.NamedImages;
import dev.kosa8.image.StepStore;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What kosa8 keeps on the host's disk: each sandbox's use against its budget
 * ({@link DiskUsage}), the report of {@code kosa8 df} ({@link DiskReport}),
 * and the prune of images and templates nothing needs any more ({@link
 * Pruner}), one at a time with image builds and imports.
 */
final class SandboxDisk {
    private final HostPaths paths;
    private final SandboxLayout layout;
    private final SandboxRegistry registry;
    private final MachineSpecs specs;
    private final Templates templates;
    private final ImageBuilds builds;

    SandboxDisk(HostPaths paths, SandboxLayout layout, SandboxRegistry registry, MachineSpecs specs,
                Templates templates, ImageBuilds builds) {
        this.paths = paths;
        this.layout = layout;
        this.registry = registry;
        this.specs = specs;
        this.templates = templates;
        this.builds = builds;
    }

    /** What {@code s} keeps on disk and what it may keep ({@code kosa8 inspect}, {@code kosa8 df}). */
    Map<String, Object> diskUse(Sandbox s) {
        DiskUsage u = DiskUsage.of(layout, s);
        Budget b = specs.budget(s.record());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("disk", u.disk());
        m.put("diskVirtual", u.diskVirtual());
        m.put("checkpoints", u.checkpoints());
        m.put("checkpointCount", s.undo().count());
        m.put("held", u.held());
        m.put("logs", u.logs());
        m.put("other", u.other());
        m.put("spool", u.spool());
        m.put("total", u.total());
        m.put("budget", b);
        return m;
    }

    /**
     * Removes the images and templates nothing needs any more ({@link
     * Pruner}); with {@code dryRun}, only says what they are. Every sandbox
     * folder on disk counts, whatever its record says.
     */
    List<Pruner.Item> prune(boolean dryRun) {
        if (!builds.lock().tryLock()) {
            throw new KosaException(KosaException.Kind.STATE, "an image build is running", "prune once it is done");
        }
        try {
            return Pruner.prune(new ImageStore(paths), templates, layout.allRootDisks(),
                    new NamedImages(paths.images()).list(),
                    new StepStore(paths.images()), builds.layers(), dryRun);
        } finally {
            builds.lock().unlock();
        }
    }

    /** {@code kosa8 df}: what kosa8 keeps on disk and what can be had back ({@link DiskReport}). */
    Map<String, Object> df() {
        return DiskReport.of(registry.list(), this, layout, new ImageStore(paths), templates);
    }
}
