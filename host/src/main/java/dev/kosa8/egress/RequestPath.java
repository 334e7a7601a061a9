package dev.kosa8.egress;

import java.util.Locale;

/**
 * The paths the broker will judge and carry. Path rules compare prefixes, so
 * a path must mean to the upstream what it says to the rule: no {@code .} or
 * {@code ..} segments, and no encoded dots, slashes or backslashes that an
 * upstream could decode into them ({@code /simple/../admin},
 * {@code /simple/%2e%2e/admin}). Checked only for hosts whose rules judge
 * paths; clients normalize dot segments before sending, so real requests to
 * such hosts do not carry them.
 */
final class RequestPath {
    private RequestPath() {
    }

    /** Null when the path (without its query) may be judged, else why not. */
    static String problem(String path) {
        String lower = path.toLowerCase(Locale.ROOT);
        if (path.indexOf('\\') >= 0 || lower.contains("%2e") || lower.contains("%2f") || lower.contains("%5c")
                || lower.contains("%00")) {
            return "the path has an encoded dot, slash, backslash or NUL, which a path rule cannot judge";
        }
        for (String segment : path.split("/", -1)) {
            if (segment.equals(".") || segment.equals("..")) {
                return "the path has a '.' or '..' segment, which a path rule cannot judge";
            }
        }
        return null;
    }
}
