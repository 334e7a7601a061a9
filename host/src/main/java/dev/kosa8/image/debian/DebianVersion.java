package dev.kosa8.image.debian;

import java.util.regex.Pattern;

/**
 * A Debian package version, {@code [epoch:]upstream[-revision]}, ordered as
 * Debian policy 5.6.12 says and as dpkg's {@code verrevcmp} does it: the
 * epoch as a number, then upstream and revision each compared in runs, a
 * non-digit run character by character (letters before everything else,
 * {@code ~} before even the end), then a digit run as a number of any size.
 * A missing revision compares as {@code 0}'s equal, as in dpkg.
 */
public record DebianVersion(long epoch, String upstream, String revision) implements Comparable<DebianVersion> {
    private static final Pattern UPSTREAM = Pattern.compile("[0-9][A-Za-z0-9.+~:-]*");
    private static final Pattern REVISION = Pattern.compile("[A-Za-z0-9.+~]*");
    private static final Pattern EPOCH = Pattern.compile("[0-9]{1,9}");

    public DebianVersion {
        if (epoch < 0 || !UPSTREAM.matcher(upstream).matches() || !REVISION.matcher(revision).matches()) {
            throw ArchiveErrors.malformed("bad Debian version: " + epoch + ":" + upstream + "-" + revision);
        }
    }

    /** Parses {@code text}; a version that breaks policy's syntax is refused. */
    public static DebianVersion parse(String text) {
        String s = text.strip();
        long epoch = 0;
        int colon = s.indexOf(':');
        if (colon >= 0) {
            String e = s.substring(0, colon);
            if (!EPOCH.matcher(e).matches()) {
                throw ArchiveErrors.malformed("bad epoch in the Debian version '" + shorten(text) + "'");
            }
            epoch = Long.parseLong(e);
            s = s.substring(colon + 1);
        }
        int dash = s.lastIndexOf('-');
        String upstream = dash < 0 ? s : s.substring(0, dash);
        String revision = dash < 0 ? "" : s.substring(dash + 1);
        if (upstream.isEmpty() || !UPSTREAM.matcher(upstream).matches()
                || (dash >= 0 && revision.isEmpty()) || !REVISION.matcher(revision).matches()) {
            throw ArchiveErrors.malformed("bad Debian version '" + shorten(text) + "'");
        }
        return new DebianVersion(epoch, upstream, revision);
    }

    @Override
    public int compareTo(DebianVersion o) {
        if (epoch != o.epoch) {
            return Long.compare(epoch, o.epoch);
        }
        int c = compareParts(upstream, o.upstream);
        return c != 0 ? c : compareParts(revision, o.revision);
    }

    /** dpkg's {@code verrevcmp}: the sign of the result is what matters. */
    static int compareParts(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() || j < b.length()) {
            while ((i < a.length() && !digit(a.charAt(i))) || (j < b.length() && !digit(b.charAt(j)))) {
                int ac = order(a, i);
                int bc = order(b, j);
                if (ac != bc) {
                    return Integer.compare(ac, bc);
                }
                i++;
                j++;
            }
            while (i < a.length() && a.charAt(i) == '0') {
                i++;
            }
            while (j < b.length() && b.charAt(j) == '0') {
                j++;
            }
            int firstDiff = 0;
            while (i < a.length() && digit(a.charAt(i)) && j < b.length() && digit(b.charAt(j))) {
                if (firstDiff == 0) {
                    firstDiff = a.charAt(i) - b.charAt(j);
                }
                i++;
                j++;
            }
            if (i < a.length() && digit(a.charAt(i))) {
                return 1;
            }
            if (j < b.length() && digit(b.charAt(j))) {
                return -1;
            }
            if (firstDiff != 0) {
                return Integer.signum(firstDiff);
            }
        }
        return 0;
    }

    private static int order(String s, int i) {
        if (i >= s.length()) {
            return 0;
        }
        char c = s.charAt(i);
        if (digit(c)) {
            return 0;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            return c;
        } else if (c == '~') {
            return -1;
        } else {
            return c + 256;
        }
    }

    private static boolean digit(char c) {
        return c >= '0' && c <= '9';
    }

    private static String shorten(String s) {
        return s.length() <= 80 ? s : s.substring(0, 80) + "…";
    }

    @Override
    public String toString() {
        return (epoch == 0 ? "" : epoch + ":") + upstream + (revision.isEmpty() ? "" : "-" + revision);
    }
}
