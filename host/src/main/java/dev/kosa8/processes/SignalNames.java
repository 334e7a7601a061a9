package dev.kosa8.processes;

import dev.kosa8.host.KosaException;
import java.util.List;
import java.util.Locale;

/** Linux's signal names and numbers (x86-64, the guest's), as {@code kill -l} gives them. */
public final class SignalNames {
    private static final List<String> NAMES = List.of("HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE",
            "KILL", "USR1", "SEGV", "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN",
            "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS");

    private SignalNames() {
    }

    /** {@code TERM}, {@code SIGTERM}, {@code sigterm} or {@code 15}: the signal's number. */
    public static int parse(String s) {
        String v = s.strip().toUpperCase(Locale.ROOT);
        if (v.startsWith("SIG")) {
            v = v.substring(3);
        }
        int i = NAMES.indexOf(v);
        if (i >= 0) {
            return i + 1;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= 1 && n <= 64) {
                return n;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new KosaException(KosaException.Kind.USAGE, "'" + s + "' is not a signal",
                "name one as kill -l does (TERM, SIGKILL, INT, HUP…) or give its number, 1 to 64");
    }

    /** {@code SIGTERM} for 15; {@code SIG34} for one without a name. */
    public static String name(int n) {
        return "SIG" + (n >= 1 && n <= NAMES.size() ? NAMES.get(n - 1) : String.valueOf(n));
    }
}
