package dev.kosa8.cli;

import dev.kosa8.host.KosaException;
import java.util.Locale;

/** Parses memory sizes the way users write them (512M, 2G, 1024 MiB), and prints byte counts for people. */
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

    /** A size in bytes as people write it: 4096, 64K, 4M, 20G. */
    static long bytes(String option, String s) {
        try {
            return dev.kosa8.daemon.Settings.parseBytes(s);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot read " + option + " '" + s + "'",
                    "write it like 64K, 4M, 20G or a number of bytes");
        }
    }

    /** 0 B, 512 B, 3.4 KiB, 250.0 MiB, 1.2 GiB. */
    static String human(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
