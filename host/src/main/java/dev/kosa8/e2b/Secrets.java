package dev.kosa8.e2b;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/** Comparing keys and tokens without telling by the time taken how much of them matched. */
final class Secrets {
    private Secrets() {
    }

    static boolean sameKey(String expected, String given) {
        if (given == null) {
            return false;
        }
        return MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), given.getBytes(StandardCharsets.UTF_8));
    }
}
