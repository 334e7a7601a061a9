package dev.kosa8.image.debian;

import java.util.List;
import java.util.Map;

/**
 * One suite of one archive to take packages from, like apt's
 * {@code deb URL SUITE main}.
 *
 * @param label names the archive in the lock file ({@code debian}, {@code debian-security})
 */
public record Source(String label, Mirror mirror, String suite, String component) {

    /**
     * What mmdebstrap uses for a Debian stable suite: the suite, its
     * {@code -updates} and its {@code -security}, component {@code main}.
     */
    public static List<Source> standard(String suite, Map<String, String> env) {
        Mirror main = Mirror.main(env);
        return List.of(new Source("debian", main, suite, "main"),
                new Source("debian", main, suite + "-updates", "main"),
                new Source("debian-security", Mirror.security(env), suite + "-security", "main"));
    }

    public String describe() {
        return mirror.base() + " " + suite + " " + component;
    }
}
