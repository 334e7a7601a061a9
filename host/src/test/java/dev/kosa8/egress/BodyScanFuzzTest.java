package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.secrets.KeyForms;
import dev.kosa8.secrets.SentinelDetector;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;

/**
 * A body on its way to the spool is searched piece by piece ({@link BodyScan}), as it arrives in chunks, TLS
 * records or DATA frames of the guest's choosing: whatever the body and wherever it is cut, the pieces must find a
 * placeholder exactly when the whole body searched at once does ({@link SentinelDetector}, which the broker uses
 * on bodies held in memory), raw, base64 at any alignment or percent-encoded, split at any byte.
 */
class BodyScanFuzzTest {
    static final String SENTINEL = "ot-aaaaBBBBccccDDDDeeeeFFFF0123456789";
    static final SentinelDetector DETECTOR = new SentinelDetector(Map.of("OTHER", SENTINEL));

    record Body(byte[] bytes, List<Integer> cuts) {
        @Override
        public String toString() {
            return new String(bytes, StandardCharsets.ISO_8859_1) + " cut at " + cuts;
        }
    }

    @Provide
    Arbitrary<Body> bodies() {
        List<String> forms = new ArrayList<>();
        for (KeyForms.Form f : KeyForms.of(SENTINEL).forms()) {
            forms.add(f.text());
        }
        Arbitrary<String> placeholder = Arbitraries.of(forms).flatMap(f -> Arbitraries.integers().between(0, 2)
                .map(how -> switch (how) {
                    case 0 -> f;
                    case 1 -> percent(f, true);
                    default -> percent(f, false);
                }));
        Arbitrary<String> pieces = Arbitraries.oneOf(
                placeholder,
                Arbitraries.of(SENTINEL.substring(0, 20), SENTINEL.substring(5), "%", "%2", "%25", "%4", "%zz", "=",
                        "+", "/", "-", "_", "\r\n", "\u00ff"),
                Arbitraries.strings().withChars("abcdefABCDEF0123456789%-=").ofMaxLength(16),
                Arbitraries.strings().ofMaxLength(8));
        return pieces.list().ofMaxSize(12).map(l -> String.join("", l)
                .getBytes(StandardCharsets.ISO_8859_1)).flatMap(b -> Arbitraries.integers().between(0, b.length)
                .list().ofMaxSize(8).map(c -> new Body(b, c.stream().sorted().toList())));
    }

    @Property(tries = 3000)
    void piecesFindWhatTheWholeFinds(@ForAll("bodies") Body body) {
        Optional<String> whole = DETECTOR.find(body.bytes(), body.bytes().length);
        BodyScan scan = new BodyScan(DETECTOR);
        int from = 0;
        List<Integer> cuts = new ArrayList<>(body.cuts());
        cuts.add(body.bytes().length);
        for (int cut : cuts) {
            scan.feed(Unpooled.wrappedBuffer(body.bytes(), from, cut - from));
            from = cut;
        }
        assertThat(scan.found()).as(body.toString()).isEqualTo(whole);
        Statistics.label("found").collect(whole.isPresent());
        Statistics.label("found").coverage(c -> c.check(true).percentage(p -> p > 30));
    }

    /** {@code text} with every character (or every other) written {@code %XX}, in either case. */
    static String percent(String text, boolean all) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (all || i % 2 == 0) {
                String hex = String.format("%02x", (int) c);
                b.append('%').append(i % 3 == 0 ? hex.toUpperCase(java.util.Locale.ROOT) : hex);
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
