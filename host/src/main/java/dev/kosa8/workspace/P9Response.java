package dev.kosa8.workspace;

import java.util.Objects;

/** A decoded R-message and the tag of the request it answers; used by host-side test clients. */
record P9Response(int tag, P9Reply reply) {
    P9Response {
        Objects.requireNonNull(reply, "reply");
    }
}
