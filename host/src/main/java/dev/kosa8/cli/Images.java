package dev.kosa8.cli;

import dev.kosa8.host.HostPaths;
import dev.kosa8.image.BuildProgress;
import dev.kosa8.image.BuildStep;
import dev.kosa8.image.ImageBuilder;
import java.io.PrintStream;

/**
 * Makes sure the guest image exists before a sandbox needs it. Built here, in
 * the CLI, so the user sees each step as it happens; the daemon only ever
 * boots an image that is complete.
 */
final class Images {
    private Images() {
    }

    /** Builds what the image lacks, if anything; at once when this build found it complete before. */
    static void ensure(HostPaths paths, PrintStream err) {
        ensure(paths, err, dev.kosa8.vm.GuestArch.host());
    }

    /**
     * As {@link #ensure(HostPaths, PrintStream)}, and the image of every other architecture this home has one
     * of (`kosa8 start` of an arm64 sandbox boots that image: after an upgrade it gets the new agent too).
     */
    static void ensureEvery(HostPaths paths, PrintStream err) {
        ensure(paths, err);
        for (dev.kosa8.vm.GuestArch arch : dev.kosa8.vm.GuestArch.values()) {
            if (arch.foreign() && new dev.kosa8.image.ImageStore(paths, arch).currentId().isPresent()) {
                ensure(paths, err, arch);
            }
        }
    }

    /** As above for the image of {@code arch}'s guests. */
    static void ensure(HostPaths paths, PrintStream err, dev.kosa8.vm.GuestArch arch) {
        ImageBuilder images = new ImageBuilder(paths, printer(err), arch);
        if (!images.ensuredBefore()) {
            images.ensure();
        }
    }

    static BuildProgress printer(PrintStream err) {
        return new BuildProgress() {
            private boolean first = true;

            @Override
            public void step(BuildStep step) {
                if (first) {
                    err.println("kosa8: building the guest image (once; later runs reuse it)");
                    first = false;
                }
                err.println("  " + step.line());
            }

            @Override
            public void note(String message) {
                err.println("kosa8: " + message);
            }
        };
    }
}
