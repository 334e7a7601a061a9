package dev.kosa8.image.debian;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * Reads Debian control-file text (a {@code Release} or {@code Packages}
 * file) into {@link Stanza}s: {@code Name: value} lines, continuation lines
 * starting with a space or tab, paragraphs separated by blank lines. Anything
 * else (a line without a colon, a continuation with no field, a field twice
 * in one paragraph, a bad field name) is refused with the line's number.
 */
public final class Stanzas {
    // Debian policy 5.1: US-ASCII printable except control characters, space and colon; not starting with # or -
    private static final Pattern NAME = Pattern.compile("[!-9;-~&&[^#-]][!-9;-~]*");

    private Stanzas() {
    }

    /** Every stanza of {@code text}; {@code what} names the file in errors. */
    public static List<Stanza> parse(String text, String what) {
        List<Stanza> out = new ArrayList<>();
        each(text, what, out::add);
        return out;
    }

    /** Hands each stanza of {@code text} to {@code sink} as it is read (a Packages file has tens of thousands). */
    public static void each(String text, String what, Consumer<Stanza> sink) {
        Map<String, String> fields = new LinkedHashMap<>();
        String last = null;
        int lineNo = 0;
        int at = 0;
        int n = text.length();
        while (at <= n) {
            int end = text.indexOf('\n', at);
            if (end < 0) {
                end = n;
            }
            String line = text.substring(at, end);
            at = end + 1;
            lineNo++;
            if (line.endsWith("\r")) {
                line = line.substring(0, line.length() - 1);
            }
            if (line.isBlank()) {
                if (!fields.isEmpty()) {
                    sink.accept(new Stanza(fields));
                    fields = new LinkedHashMap<>();
                }
                last = null;
                if (end == n) {
                    break;
                }
                continue;
            }
            char c = line.charAt(0);
            if (c == ' ' || c == '\t') {
                if (last == null) {
                    throw ArchiveErrors.malformed(what + " line " + lineNo + " continues no field");
                }
                fields.merge(last, "\n" + line.strip(), String::concat);
            } else if (c == '#') {
                continue; // a comment line (allowed in control files, never in the archive's, harmless)
            } else {
                int colon = line.indexOf(':');
                if (colon <= 0) {
                    throw ArchiveErrors.malformed(what + " line " + lineNo + " is not `Field: value`");
                }
                String name = line.substring(0, colon);
                if (!NAME.matcher(name).matches()) {
                    throw ArchiveErrors.malformed(what + " line " + lineNo + " has a bad field name");
                }
                for (String k : fields.keySet()) {
                    if (k.equalsIgnoreCase(name)) {
                        throw ArchiveErrors.malformed(what + " line " + lineNo + " repeats the field " + name);
                    }
                }
                fields.put(name, line.substring(colon + 1).strip());
                last = name;
            }
            if (end == n) {
                break;
            }
        }
        if (!fields.isEmpty()) {
            sink.accept(new Stanza(fields));
        }
    }
}
