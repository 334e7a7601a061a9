package dev.kosa8.secrets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.CharRange;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

/** The macOS backend cannot run here; what can go wrong on Linux already is the text written to {@code security -i}. */
class KeychainValuesTest {
    @Test
    void quotesForSecuritysLineParser() {
        assertThat(KeychainValues.quote("sk-abc")).isEqualTo("\"sk-abc\"");
        assertThat(KeychainValues.quote("a\"b\\c'd")).isEqualTo("\"a\\\"b\\\\c'd\"");
        assertThat(KeychainValues.addCommand("OPENAI_API_KEY", "sk-\"x\""))
                .isEqualTo("add-generic-password -U -s kosa8 -a \"OPENAI_API_KEY\" -w \"sk-\\\"x\\\"\"\n");
    }

    @Property(tries = 2000)
    void everyValueComesBackWholeFromTheParsedLine(
            @ForAll @CharRange(from = '!', to = '~') @StringLength(min = 8, max = 300) String value) {
        String line = KeychainValues.addCommand("K", value);
        assertThat(line).endsWith("\n").hasLineCount(1);
        assertThat(splitLikeSecurity(line.strip())).containsExactly("add-generic-password", "-U", "-s", "kosa8", "-a",
                "K", "-w", value);
    }

    @Test
    void refusesAValueTooLongForSecuritysLineBufferBeforeRunningIt() {
        // On Linux there is no /usr/bin/security: reaching it would fail with a HOST error, not USAGE.
        assertThatThrownBy(() -> new KeychainValues().put("K", "k".repeat(4000))).isInstanceOf(KosaException.class)
                .satisfies(e -> assertThat(((KosaException) e).kind()).isEqualTo(KosaException.Kind.USAGE))
                .hasMessageContaining("too long").hasMessageNotContaining("kkkk");
    }

    /**
     * How {@code security -i} splits a line, as its manual and source describe
     * it: words separated by white space; a word that starts with {@code "} or
     * {@code '} runs to the same quote; a backslash takes the next character
     * literally, inside quotes or not.
     */
    private static List<String> splitLikeSecurity(String line) {
        List<String> words = new ArrayList<>();
        int i = 0;
        while (i < line.length()) {
            char c = line.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
                continue;
            }
            StringBuilder w = new StringBuilder();
            char quote = c == '"' || c == '\'' ? c : 0;
            if (quote != 0) {
                i++;
            }
            while (i < line.length()) {
                char d = line.charAt(i++);
                if (d == '\\' && i < line.length()) {
                    w.append(line.charAt(i++));
                } else if (quote != 0 ? d == quote : Character.isWhitespace(d)) {
                    break;
                } else {
                    w.append(d);
                }
            }
            words.add(w.toString());
        }
        return words;
    }
}
