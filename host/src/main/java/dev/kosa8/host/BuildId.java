package dev.kosa8.host;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Which build of kosa8 this is: the jar's modification time and size. The
 * CLI compares its own with the daemon's and replaces a daemon of another
 * build; the daemon runs from a copy of the jar, so the CLI hands it the
 * original's id in {@code -Dkosa8.build}. Kept apart from the daemon's and
 * the CLI's classes so that the CLI can say it without loading either.
 */
public final class BuildId {
    private static volatile String current;

    private BuildId() {
    }

    /** This build's id; "unknown" when it runs from classes rather than a jar (tests in an IDE). */
    public static String current() {
        String c = current;
        if (c == null) {
            c = find();
            current = c;
        }
        return c;
    }

    private static String find() {
        String given = System.getProperty("kosa8.build");
        if (given != null && !given.isBlank()) {
            return given;
        }
        try {
            Path jar = Path.of(BuildId.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return Files.getLastModifiedTime(jar).toMillis() + "-" + Files.size(jar);
        } catch (Exception e) {
            return "unknown";
        }
    }
}
