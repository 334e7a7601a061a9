package dev.kosa8.image;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.Ws9p;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The guest kernel module's copies of kosa8's 9p messages and sizes agree
 * with their one definition, {@link Ws9p}, which the daemon and the agent
 * compile against. The C source keeps its own {@code #define}s (it is
 * compiled as it ships, in the image build); this test reads them, evaluates
 * each, and names every one that differs, so a change made on one side only
 * fails the build instead of a guest's mount.
 */
class Ws9pModuleConstantsTest {
    /** What the module's #defines use from the kernel's headers. */
    private static final Map<String, Long> KERNEL = Map.of("SECTOR_SHIFT", 9L);
    /** Each {@code #define} of the module that stands for a value of {@link Ws9p}, and that value. */
    private static final Map<String, Long> SHARED = shared();
    /** The module's own {@code #define}s: its device's plumbing, and plain 9P2000.L. */
    private static final Set<String> ITS_OWN = Set.of("WS_PORT", "WS_CTL_BUFS", "WS_CTL_SIZE", "WS_RREAD_HDR",
            "WS_COUNT_AT", "WS_BIO_BYTES", "WS_NOTICES_MAX", "WS_FLUSH_EVERY", "WS_OWN_MAX", "WS_RWALK_CLONE_SIZE", "WS_LISTINGS_MAX", "WS_DIRFIDS",
            "WS_CHANGED_BITS", "WS_RLOPEN_SIZE", "WS_QUIET_BATCH");
    private static final Pattern DEFINE = Pattern.compile(
            "(?m)^#define\\s+(WS_\\w+)\\s+(.*?)\\s*(?:/\\*.*)?$");

    private static Map<String, Long> shared() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("WS_HDR", (long) Ws9p.HEADER);
        m.put("WS_MAXSIZE", (long) Ws9p.MSIZE);
        m.put("WS_RSYNC", (long) Ws9p.RSYNC);
        m.put("WS_TSYNC", (long) Ws9p.TSYNC);
        m.put("WS_SYNC_SIZE", (long) Ws9p.SYNC_SIZE);
        m.put("WS_TWALKQ", (long) Ws9p.TWALKQ);
        m.put("WS_TWALKQ_SIZE", (long) Ws9p.TWALKQ_SIZE);
        m.put("WS_TLOPENQ", (long) Ws9p.TLOPENQ);
        m.put("WS_TLOPENQ_SIZE", (long) Ws9p.TLOPENQ_SIZE);
        m.put("WS_TCACHE", (long) Ws9p.TCACHE);
        m.put("WS_RNOTICE", (long) Ws9p.RNOTICE);
        m.put("WS_NOTICE_ENTRY", (long) Ws9p.NOTICE_ENTRY);
        m.put("WS_NOTICE_GONE", (long) Ws9p.NOTICE_GONE);
        m.put("WS_NOTICE_FILE", (long) Ws9p.NOTICE_FILE);
        m.put("WS_NOTICE_ATTRS", (long) Ws9p.NOTICE_ATTRS);
        m.put("WS_TCLUNKQ", (long) Ws9p.TCLUNKQ);
        m.put("WS_TQUIET", (long) Ws9p.TQUIET);
        m.put("WS_RQUIET", (long) Ws9p.RQUIET);
        m.put("WS_TWINDOW", (long) Ws9p.TWINDOW);
        m.put("WS_RREADW", (long) Ws9p.RREADW);
        m.put("WS_TRETURN", (long) Ws9p.TRETURN);
        m.put("WS_TCLUNKQ_SIZE", (long) Ws9p.TCLUNKQ_SIZE);
        m.put("WS_RREADW_SIZE", (long) Ws9p.RREADW_SIZE);
        m.put("WS_TRETURN_SIZE", (long) Ws9p.TRETURN_SIZE);
        m.put("WS_SLOT_SECTORS", (long) Ws9p.SLOT_SIZE >> KERNEL.get("SECTOR_SHIFT"));
        return m;
    }

    @Test
    void everySharedConstantOfTheModuleIsWs9ps() {
        assertThat(disagreements(moduleSource())).as("kosa8_ws9p.c against dev.kosa8.protocol.Ws9p").isEmpty();
    }

    @Test
    void aConstantChangedInTheModuleAloneIsNamed() {
        String changed = moduleSource().replaceFirst("(?m)^#define WS_TRETURN 252", "#define WS_TRETURN 254");
        assertThat(changed).isNotEqualTo(moduleSource());
        assertThat(disagreements(changed)).containsExactly("WS_TRETURN is 254 in kosa8_ws9p.c, 252 in Ws9p");
    }

    @Test
    void aSizeWrittenAsAnExpressionIsEvaluatedBeforeItIsCompared() {
        String changed = moduleSource().replaceFirst("(?m)^#define WS_RREADW_SIZE \\(WS_HDR \\+ 12\\)",
                "#define WS_RREADW_SIZE (WS_HDR + 8)");
        assertThat(disagreements(changed)).containsExactly("WS_RREADW_SIZE is 15 in kosa8_ws9p.c, 19 in Ws9p");
    }

    @Test
    void aSharedConstantMissingFromTheModuleIsNamed() {
        String without = moduleSource().replaceFirst("(?m)^#define WS_TQUIET 248.*\n", "");
        assertThat(disagreements(without)).containsExactly("WS_TQUIET is not defined in kosa8_ws9p.c");
    }

    @Test
    void aNewDefineMustSayWhetherItIsShared() {
        String added = moduleSource().replaceFirst("(?m)^#define WS_HDR 7", "#define WS_TFOO 254\n#define WS_HDR 7");
        assertThat(disagreements(added)).containsExactly(
                "WS_TFOO is neither in Ws9p nor listed as the module's own: add it to this test's SHARED or ITS_OWN");
    }

    /** What differs between the module's #defines in {@code source} and {@link Ws9p}, each naming the constant. */
    private static List<String> disagreements(String source) {
        Map<String, String> defines = new TreeMap<>();
        Matcher m = DEFINE.matcher(source);
        while (m.find()) {
            defines.put(m.group(1), m.group(2));
        }
        List<String> found = new ArrayList<>();
        for (var e : SHARED.entrySet()) {
            if (!defines.containsKey(e.getKey())) {
                found.add(e.getKey() + " is not defined in kosa8_ws9p.c");
                continue;
            }
            long value = new Expression(defines.get(e.getKey()), defines).value();
            if (value != e.getValue()) {
                found.add(e.getKey() + " is " + value + " in kosa8_ws9p.c, " + e.getValue() + " in Ws9p");
            }
        }
        for (String name : defines.keySet()) {
            if (!SHARED.containsKey(name) && !ITS_OWN.contains(name)) {
                found.add(name + " is neither in Ws9p nor listed as the module's own: add it to this test's SHARED"
                        + " or ITS_OWN");
            }
        }
        return found;
    }

    private static String moduleSource() {
        return new String(WorkspaceModule.source(), StandardCharsets.UTF_8);
    }

    /**
     * A #define's value: integers, other #defines, the kernel's few, parentheses, {@code + - * << >>}
     * (C's precedence: shifts below sums, sums below products).
     */
    private static final class Expression {
        private final String text;
        private final Map<String, String> defines;
        private int at;

        Expression(String text, Map<String, String> defines) {
            this.text = text.replace(" ", "").replace("\t", "");
            this.defines = defines;
        }

        long value() {
            long v = shift();
            if (at != text.length()) {
                throw new IllegalArgumentException("cannot read '" + text + "' past position " + at);
            }
            return v;
        }

        private long shift() {
            long v = sum();
            while (text.startsWith("<<", at) || text.startsWith(">>", at)) {
                boolean left = text.charAt(at) == '<';
                at += 2;
                long by = sum();
                v = left ? v << by : v >> by;
            }
            return v;
        }

        private long sum() {
            long v = product();
            while (at < text.length() && (text.charAt(at) == '+' || text.charAt(at) == '-')) {
                char op = text.charAt(at++);
                long w = product();
                v = op == '+' ? v + w : v - w;
            }
            return v;
        }

        private long product() {
            long v = atom();
            while (at < text.length() && text.charAt(at) == '*') {
                at++;
                v *= atom();
            }
            return v;
        }

        private long atom() {
            if (text.charAt(at) == '(') {
                at++;
                long v = shift();
                if (at >= text.length() || text.charAt(at) != ')') {
                    throw new IllegalArgumentException("no ')' in '" + text + "' at position " + at);
                }
                at++;
                return v;
            }
            int start = at;
            while (at < text.length() && (Character.isLetterOrDigit(text.charAt(at)) || text.charAt(at) == '_')) {
                at++;
            }
            String word = text.substring(start, at);
            if (word.isEmpty()) {
                throw new IllegalArgumentException("cannot read '" + text + "' at position " + start);
            }
            if (Character.isDigit(word.charAt(0))) {
                return Long.decode(word);
            }
            if (KERNEL.containsKey(word)) {
                return KERNEL.get(word);
            }
            if (defines.containsKey(word)) {
                return new Expression(defines.get(word), defines).value();
            }
            throw new IllegalArgumentException("'" + word + "' is not defined in kosa8_ws9p.c");
        }
    }
}
