package dev.kosa8.image;

import dev.kosa8.host.FileTrees;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.UUID;

/**
 * The built parts on disk, {@code images/<kind>/<hash>/}. A part is built in a
 * {@code .partial-*} directory beside its target and renamed into place only
 * when complete, so an interrupted build never leaves half a part; partials
 * left by a crash are removed by the next build (which holds the build lock).
 */
final class PartStore {
    static final String PARTIAL_PREFIX = ".partial-";
    private final Path images;

    PartStore(Path images) {
        this.images = images;
    }

    /** Makes the contents of a part inside a fresh, empty directory. */
    @FunctionalInterface
    interface Maker {
        void make(Path dir) throws IOException;
    }

    Path directory(PartKind kind, String hash) {
        return images.resolve(kind.directoryName()).resolve(hash);
    }

    boolean has(PartKind kind, String hash) {
        return Files.isRegularFile(directory(kind, hash).resolve(Manifests.FILE));
    }

    /** Builds a part with {@code maker} and moves it into place atomically; returns its directory. */
    Path build(PartKind kind, String hash, Maker maker) throws IOException {
        Path target = directory(kind, hash);
        Files.createDirectories(target.getParent());
        Path partial = target.resolveSibling(PARTIAL_PREFIX + hash.substring(0, 12) + "-" + UUID.randomUUID());
        Files.createDirectory(partial);
        try {
            maker.make(partial);
            if (!Files.isRegularFile(partial.resolve(Manifests.FILE))) {
                throw new IllegalStateException("the " + kind + " maker wrote no manifest");
            }
            if (Files.exists(target)) {
                FileTrees.delete(target); // a target without a manifest: an incomplete leftover
            }
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
            return target;
        } finally {
            if (Files.exists(partial)) {
                FileTrees.delete(partial);
            }
        }
    }

    /** Removes every {@code .partial-*} directory; call only while holding the build lock. */
    int removeStalePartials() throws IOException {
        int removed = 0;
        for (PartKind kind : PartKind.values()) {
            Path dir = images.resolve(kind.directoryName());
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, PARTIAL_PREFIX + "*")) {
                for (Path p : s) {
                    FileTrees.delete(p);
                    removed++;
                }
            }
        }
        return removed;
    }
}
