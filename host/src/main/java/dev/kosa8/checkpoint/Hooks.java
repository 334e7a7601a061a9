package dev.kosa8.checkpoint;

import java.io.IOException;

/**
 * Where tests look in: which files a capture reads, and named points at which
 * a capture can be made to fail as a full disk would. Production uses
 * {@link #NONE}.
 */
interface Hooks {
    Hooks NONE = new Hooks() {
    };

    /** A capture is about to read the content of the file at {@code path} (a byte string). */
    default void reading(String path) {
    }

    /**
     * A capture has reached {@code point}: {@code "object-stored"} after each new object,
     * {@code "manifest-written"} when the manifest is complete under its temporary name.
     */
    default void at(String point) throws IOException {
    }
}
