package dev.kosa8.egress;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Optional;

/** Paths compared as the file system resolves them, so that a symbolic link cannot hide where a file lies. */
public final class RealPaths {
    private RealPaths() {
    }

    /** The path with symbolic links resolved as far as it exists, the rest appended as given. */
    public static Path of(Path p) {
        Path abs = p.toAbsolutePath().normalize();
        Path existing = abs;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return abs;
        }
        try {
            return existing.toRealPath().resolve(existing.relativize(abs));
        } catch (IOException e) {
            return abs;
        }
    }

    /**
     * The first of {@code files}, as given, that lies inside {@code folder} or is the folder itself, both compared
     * as {@link #of(Path) real paths}: a guest can write its folder, so kosa8 refuses to share one that holds a file it
     * trusts, and a link on either side must not hide that. The folder is resolved once, however many files.
     */
    public static Optional<Path> firstInside(Collection<Path> files, Path folder) {
        Path real = of(folder);
        return files.stream().filter(f -> of(f).startsWith(real)).findFirst();
    }
}
