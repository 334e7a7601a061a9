package dev.kosa8.image;

import java.util.Map;

/**
 * {@code manifest.json} of one built part: what it was made from and facts
 * about it. It is written last, so a part directory with a manifest is complete.
 */
record PartManifest(int format, String kind, String hash, String created, double buildSeconds,
                    Map<String, String> inputs, Map<String, String> facts) {
    static final int FORMAT = 1;

    PartManifest {
        inputs = Map.copyOf(inputs);
        facts = Map.copyOf(facts);
    }
}
