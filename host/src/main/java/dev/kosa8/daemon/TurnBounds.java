package dev.kosa8.daemon;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What a guest's asks for turn checkpoints may cost the host (docs/agents.md,
 * "Bounds"): how many in a burst and how often after it, how many are kept
 * and the bytes they may hold. Past the count or the bytes, the oldest turns
 * are thinned first: the newest {@link #KEEP_NEWEST} always stay, and among
 * the older ones the turn closest in time to the one before it goes, so
 * history grows sparser with age instead of being cut off.
 */
record TurnBounds(int burst, Duration refill, int maxKept, long maxBytes) {
    static final int KEEP_NEWEST = 5;

    /** Five at once, then one every ten seconds; fifty kept, in at most 4 GiB. */
    static final TurnBounds DEFAULT = new TurnBounds(5, Duration.ofSeconds(10), 50, 4L << 30);

    /**
     * The bounds from the host-side test setting {@code KOSA8_TEST_TURN_BOUNDS} ({@code burst=3,refill=30,kept=2,
     * bytes=N}, seconds and bytes; missing keys keep the default), or the default when it is unset. Never settable
     * from a guest: it is the daemon's environment.
     */
    static TurnBounds fromTestSetting(String setting) {
        if (setting == null || setting.isBlank()) {
            return DEFAULT;
        }
        TurnBounds b = DEFAULT;
        for (String kv : setting.split(",")) {
            String[] p = kv.split("=", 2);
            long v = Long.parseLong(p[1].trim());
            b = switch (p[0].trim()) {
                case "burst" -> new TurnBounds((int) v, b.refill, b.maxKept, b.maxBytes);
                case "refill" -> new TurnBounds(b.burst, Duration.ofSeconds(v), b.maxKept, b.maxBytes);
                case "kept" -> new TurnBounds(b.burst, b.refill, (int) v, b.maxBytes);
                case "bytes" -> new TurnBounds(b.burst, b.refill, b.maxKept, v);
                default -> throw new IllegalArgumentException("KOSA8_TEST_TURN_BOUNDS: unknown key " + p[0]);
            };
        }
        return b;
    }

    TurnBounds {
        if (burst < 1 || refill.isNegative() || refill.isZero() || maxKept < 1 || maxBytes < 1) {
            throw new IllegalArgumentException("turn bounds must be positive");
        }
    }

    /** The turns to remove, oldest first, so that what stays is within the count and the bytes. */
    List<Turn> thin(List<Turn> turns) {
        List<Turn> left = new ArrayList<>(turns);
        List<Turn> gone = new ArrayList<>();
        while (left.size() > 1 && (left.size() > maxKept || bytes(left) > maxBytes)) {
            Turn t = left.remove(victim(left));
            gone.add(t);
        }
        gone.sort(java.util.Comparator.comparing(Turn::created));
        return gone;
    }

    /** Among all but the newest, the turn closest to its predecessor; the oldest when only it is a candidate. */
    private static int victim(List<Turn> left) {
        int candidates = Math.max(1, left.size() - KEEP_NEWEST);
        int best = 0;
        Duration bestGap = null;
        for (int i = 1; i < candidates; i++) {
            Duration gap = Duration.between(left.get(i - 1).created(), left.get(i).created());
            if (bestGap == null || gap.compareTo(bestGap) < 0) {
                best = i;
                bestGap = gap;
            }
        }
        return best;
    }

    private static long bytes(List<Turn> turns) {
        return turns.stream().mapToLong(Turn::bytes).sum();
    }
}
