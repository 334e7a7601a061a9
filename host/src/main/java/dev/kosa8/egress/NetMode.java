package dev.kosa8.egress;

import java.util.Locale;

/** How much network a sandbox has: {@code --net closed|open|none}. */
public enum NetMode {
    /** The default: the broker allows only the sandbox's allow-list. */
    CLOSED,
    /** Every host allowed, asked for explicitly; addresses still checked, everything still logged. */
    OPEN,
    /** No network device at all. */
    NONE;

    public static NetMode parse(String s) {
        try {
            return valueOf(s.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.USAGE, "no network mode '" + s
                    + "'", "use --net closed (the default: only --allow'ed hosts), open (every host, logged) or none");
        }
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
