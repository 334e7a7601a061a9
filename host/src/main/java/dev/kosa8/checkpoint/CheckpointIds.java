package dev.kosa8.checkpoint;

import java.security.SecureRandom;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * Checkpoint ids: {@code c} + UTC time to the second + 4 random hex digits,
 * such as {@code c20261130T081512-3fa2}. Sorted by name they are sorted by
 * time; safe as a file name and as a QEMU snapshot tag (no spaces, no quotes).
 */
final class CheckpointIds {
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss")
            .withZone(ZoneOffset.UTC);
    private static final SecureRandom RANDOM = new SecureRandom();

    private CheckpointIds() {
    }

    static String next(Instant now) {
        return "c" + TIME.format(now) + "-" + String.format("%04x", RANDOM.nextInt(1 << 16));
    }

    static boolean isValid(String id) {
        return id != null && id.matches("c[0-9]{8}T[0-9]{6}-[0-9a-f]{4}");
    }
}
