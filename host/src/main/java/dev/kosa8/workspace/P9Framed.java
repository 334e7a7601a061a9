package dev.kosa8.workspace;

import java.util.Objects;

/** A decoded T-message and the tag its reply must carry. */
record P9Framed(int tag, P9Request request) {
    P9Framed {
        Objects.requireNonNull(request, "request");
    }
}
