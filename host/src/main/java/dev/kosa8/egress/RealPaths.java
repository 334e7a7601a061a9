package dev.kosa8.egress;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

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
}
