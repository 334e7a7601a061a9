package dev.kosa8.cli;

import dev.kosa8.host.KosaException;

/** Checks a sandbox id or prefix before it goes into a request path. */
final class Ids {
    private Ids() {
    }

    static String check(String id) {
        if (id == null || !id.matches("[0-9a-f]{1,12}")) {
            throw new KosaException(KosaException.Kind.USAGE, "'" + id + "' is not a sandbox id",
                    "ids are up to 12 hex characters; `kosa8 ls` lists them");
        }
        return id;
    }
}
