package dev.kosa8.daemon;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * Sandbox ids: 12 lowercase hex characters, random. Short enough to type and
 * to keep socket paths short; validated wherever one comes in, so an id can
 * never name a path outside the sandboxes' directory.
 */
public final class SandboxIds {
    private static final Pattern VALID = Pattern.compile("[0-9a-f]{12}");
    private static final SecureRandom RANDOM = new SecureRandom();

    private SandboxIds() {
    }

    public static String newId() {
        byte[] b = new byte[6];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    public static boolean isValid(String id) {
        return id != null && VALID.matcher(id).matches();
    }
}
