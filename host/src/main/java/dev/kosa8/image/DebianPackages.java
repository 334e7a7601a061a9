package dev.kosa8.image;

import dev.kosa8.host.HostCommand;
import dev.kosa8.host.KosaException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Finds, downloads and unpacks Debian packages with the host's own apt,
 * without installing anything: {@code apt-cache show}, {@code apt-get download}
 * into a cache folder, {@code dpkg-deb -x}. When apt's package lists are stale
 * or missing it runs {@code apt-get update} once if we are root, and otherwise
 * says the exact command to run.
 */
final class DebianPackages {
    private final Path debs;
    private final Path log;
    private final boolean root;
    private boolean updated;

    DebianPackages(Path debs, Path log, boolean root) {
        this.debs = debs;
        this.log = log;
        this.root = root;
    }

    /** The version of {@code name} apt would install now. */
    AptRecord candidate(String name) {
        return AptRecord.parse(withUpdateOnFailure("look up the package " + name,
                () -> HostCommand.of("apt-cache", "show", "--no-all-versions", name).logTo(log)
                        .run(KosaException.Kind.IMAGE, "apt-cache show " + name)));
    }

    /** The cached {@code .deb} of {@code pkg}, downloaded first when it is not cached. */
    Path download(DebPackage pkg) {
        Path deb = debs.resolve(pkg.fileName());
        if (Files.isRegularFile(deb)) {
            return deb;
        }
        try {
            Files.createDirectories(debs);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot create " + debs + ": " + e.getMessage(), "", e);
        }
        withUpdateOnFailure("download " + pkg.aptSelector(),
                () -> HostCommand.of("apt-get", "download", pkg.aptSelector()).in(debs).logTo(log)
                        .run(KosaException.Kind.IMAGE, "apt-get download " + pkg.aptSelector()));
        if (!Files.isRegularFile(deb)) {
            throw new KosaException(KosaException.Kind.IMAGE,
                    "apt-get download " + pkg.aptSelector() + " did not write " + deb + " (see " + log + ")",
                    "check the log; the package name or version may have changed");
        }
        return deb;
    }

    /** Unpacks {@code deb} into {@code dir} ({@code dpkg-deb -x}: no scripts run, nothing installed). */
    void unpack(Path deb, Path dir) {
        HostCommand.of("dpkg-deb", "-x", deb.toString(), dir.toString()).logTo(log)
                .run(KosaException.Kind.IMAGE, "unpack " + deb.getFileName());
    }

    private String withUpdateOnFailure(String what, java.util.function.Supplier<String> action) {
        try {
            return action.get();
        } catch (KosaException first) {
            if (updated) {
                throw first;
            }
            if (!root) {
                throw new KosaException(KosaException.Kind.IMAGE,
                        "could not " + what + "; apt's package lists may be missing or out of date: "
                                + first.getMessage(),
                        "run `sudo apt-get update`, then run the command again", first);
            }
            updated = true;
            HostCommand.of("apt-get", "update").logTo(log).run(KosaException.Kind.IMAGE, "apt-get update");
            return action.get();
        }
    }
}
