package dev.kosa8.cli;

import dev.kosa8.host.KosaException;
import java.util.Locale;

/** Parses memory sizes the way users write them: 512M, 2G, 1024 (MiB). */
final class Sizes {
    private Sizes() {
    }

    static int mebibytes(String s) {
        String v = s.trim().toUpperCase(Locale.ROOT).replace("IB", "").replace("B", "");
        try {
            if (v.endsWith("G")) {
                return Math.multiplyExact(Integer.parseInt(v.substring(0, v.length() - 1)), 1024);
            }
            if (v.endsWith("M")) {
                return Integer.parseInt(v.substring(0, v.length() - 1));
            }
            return Integer.parseInt(v);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot read memory size '" + s + "'",
                    "write it like 512M, 2G or 1024 (MiB)");
        }
    }
}
