package dev.kosa8.host;

import com.github.difflib.DiffUtils;
import com.github.difflib.UnifiedDiffUtils;
import com.github.difflib.patch.AbstractDelta;
import com.github.difflib.patch.Patch;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Unified diffs of two versions of a file, for {@code kosa8 diff} and
 * {@code kosa8 review}: java-diff-utils' Myers diff with three lines of context.
 * Only text is diffed: git's test (no NUL byte in the first 8,000 bytes), at
 * most {@link #MAX_BYTES} a side, so a large or binary file costs no more than
 * its hash. A last line without a newline differs from the same line with one,
 * and is marked as diff(1) marks it.
 */
public final class UnifiedDiff {
    public static final int MAX_BYTES = 1 << 20;
    private static final int SNIFF = 8000;
    private static final String NO_NEWLINE = "\\ No newline at end of file";
    /** Marks, inside the comparison, a last line that has no newline. */
    private static final char UNTERMINATED = '\u0000';
    private static final Pattern EMPTY_RANGE = Pattern.compile("([-+])(\\d+),0\\b");

    /**
     * The hunks ({@code @@ … @@} and their lines, no file header), and the lines they add and remove.
     */
    public record Hunks(String text, int added, int removed) {
    }

    private UnifiedDiff() {
    }

    /** Whether {@code bytes} (a whole file; null for an absent one) is diffed as text. */
    public static boolean isText(byte[] bytes) {
        if (bytes == null) {
            return true;
        }
        if (bytes.length > MAX_BYTES) {
            return false;
        }
        for (int i = 0; i < Math.min(bytes.length, SNIFF); i++) {
            if (bytes[i] == 0) {
                return false;
            }
        }
        return true;
    }

    /** The hunks from {@code before} to {@code after} (null: absent, as empty), or null if either is not text. */
    public static Hunks of(byte[] before, byte[] after) {
        if (!isText(before) || !isText(after)) {
            return null;
        }
        List<String> a = lines(before);
        List<String> b = lines(after);
        Patch<String> patch = DiffUtils.diff(a, b);
        int added = 0;
        int removed = 0;
        for (AbstractDelta<String> d : patch.getDeltas()) {
            removed += d.getSource().size();
            added += d.getTarget().size();
        }
        List<String> out = UnifiedDiffUtils.generateUnifiedDiff("a", "b", a, patch, 3);
        StringBuilder text = new StringBuilder();
        for (String line : out.subList(Math.min(2, out.size()), out.size())) { // the ---/+++ lines are the caller's
            if (line.startsWith("@@")) {
                line = emptyRangesAsDiffWritesThem(line);
            }
            if (!line.isEmpty() && line.charAt(line.length() - 1) == UNTERMINATED) {
                text.append(line, 0, line.length() - 1).append('\n').append(NO_NEWLINE).append('\n');
            } else {
                text.append(line).append('\n');
            }
        }
        return new Hunks(text.toString(), added, removed);
    }

    /**
     * A range of no lines names the line before it, as diff(1) and git write it ({@code -0,0} for a file that
     * was empty): java-diff-utils names the line after, which patch(1) would misplace.
     */
    private static String emptyRangesAsDiffWritesThem(String header) {
        Matcher m = EMPTY_RANGE.matcher(header);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(out, m.group(1) + Math.max(0, Integer.parseInt(m.group(2)) - 1) + ",0");
        }
        return m.appendTail(out).toString();
    }

    private static List<String> lines(byte[] bytes) {
        List<String> out = new ArrayList<>();
        if (bytes == null || bytes.length == 0) {
            return out;
        }
        String s = new String(bytes, StandardCharsets.UTF_8);
        int start = 0;
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == '\n') {
                out.add(s.substring(start, i));
                start = i + 1;
            }
        }
        if (start < s.length()) {
            out.add(s.substring(start) + UNTERMINATED);
        }
        return out;
    }
}
