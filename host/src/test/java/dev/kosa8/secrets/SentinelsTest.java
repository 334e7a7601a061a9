package dev.kosa8.secrets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class SentinelsTest {
    @Test
    void keepsTheVendorPrefixesOfRealKeys() {
        String body = "x".repeat(60);
        assertThat(prefix("sk-ant-api03-" + body)).isEqualTo("sk-ant-api03-");
        assertThat(prefix("sk-proj-" + body)).isEqualTo("sk-proj-");
        assertThat(prefix("sk-" + body)).isEqualTo("sk-");
        assertThat(prefix("ghp_" + "A".repeat(36))).isEqualTo("ghp_");
        assertThat(prefix("github_pat_11ABCDEFG0" + body)).isEqualTo("github_pat_");
        assertThat(prefix("xoxb-1234-5678-abcdef")).isEqualTo("xoxb-"); // words start with a letter
        assertThat(prefix("xoxp-abc-def-ghi-" + body)).isEqualTo("xoxp-abc-def-");
        assertThat(prefix("glpat-" + "Z".repeat(20))).isEqualTo("glpat-");
    }

    @Test
    void keepsNoPrefixFromKeysWithoutOne() {
        assertThat(prefix("AKIAIOSFODNN7EXAMPLE")).isEmpty();
        assertThat(prefix("0123456789abcdef")).isEmpty();
        assertThat(prefix("abcdefghijk-123456789")).isEmpty(); // first word longer than 9 characters
    }

    @Test
    void capsThePrefixAtHalfTheKeyAndAtSixteenCharacters() {
        assertThat(prefix("sk-ant-xy")).isEqualTo("sk-"); // "sk-ant-" is 7 of 9: more than half
        assertThat(prefix("sk-ABCDE")).isEqualTo("sk-");
        assertThat(prefix("sk-ABCD")).isEqualTo("sk-");
        assertThat(prefix("sk-ABC")).isEqualTo("sk-");
        assertThat(prefix("sk-AB")).isEmpty();
        // three words of 17 characters: only the first two fit in 16
        assertThat(prefix("abcdefg-hijklmn-o-" + "Q".repeat(40))).isEqualTo("abcdefg-hijklmn-");
        // a fourth word is never taken
        assertThat(prefix("a-b-c-d-" + "Q".repeat(40))).isEqualTo("a-b-c-");
    }

    @Test
    void redrawsWhenTheRandomPartWouldEqualTheKey() {
        // A generator that first yields exactly the key's own characters.
        String key = "sk-AAAA0000";
        var rng = new java.util.random.RandomGenerator() {
            int calls;

            @Override
            public long nextLong() {
                throw new UnsupportedOperationException();
            }

            @Override
            public int nextInt(int bound) {
                int i = calls++;
                return i < 8 ? (i < 4 ? 0 : 52) : 1; // 'A' x4, '0' x4, then 'B' ever after
            }
        };
        assertThat(Sentinels.mint(key, rng)).isEqualTo("sk-BBBBBBBB");
    }

    @Test
    void refusesAnEmptyValue() {
        assertThatThrownBy(() -> Sentinels.mint("", new Random(1))).isInstanceOf(IllegalArgumentException.class);
    }

    @Property(tries = 2000)
    void sentinelsHaveTheKeysShapeAndNothingElseOfIt(@ForAll("keys") String key, @ForAll long seed) {
        String a = Sentinels.mint(key, new Random(seed));
        String b = Sentinels.mint(key, new Random(seed + 1));
        String p = key.substring(0, Sentinels.prefixLength(key));

        assertThat(a).hasSameSizeAs(key).startsWith(p).isNotEqualTo(key);
        assertThat(a.substring(p.length())).matches("[A-Za-z0-9]*");
        assertThat(p.length()).isLessThanOrEqualTo(Math.min(16, key.length() / 2));
        assertThat(p).matches("([a-z][a-z0-9]{0,7}[-_]){0,3}");
        if (key.length() - p.length() >= 8) {
            assertThat(b).isNotEqualTo(a); // shorter random parts may collide by chance (1 in 62^4 at worst)
        }
        assertThat(Sentinels.mint(key)).hasSameSizeAs(key).startsWith(p).isNotEqualTo(key);
    }

    /** Printable-ASCII keys of 8 to 200 characters, half of them behind a vendor-like prefix. */
    @Provide
    Arbitrary<String> keys() {
        Arbitrary<String> body = Arbitraries.strings().withCharRange('!', '~').ofMinLength(8).ofMaxLength(200);
        Arbitrary<String> word = Combinators.combine(Arbitraries.strings().withCharRange('a', 'z').ofLength(1),
                Arbitraries.strings().withCharRange('a', 'z').numeric().ofMaxLength(9),
                Arbitraries.of("-", "_")).as((h, t, s) -> h + t + s);
        Arbitrary<String> prefixed = Combinators.combine(word.list().ofMinSize(1).ofMaxSize(4), body)
                .as((ws, b) -> String.join("", ws) + b);
        return Arbitraries.oneOf(body, prefixed, Arbitraries.of("sk-ant-api03-", "ghp_", "github_pat_", "xoxb-")
                .flatMap(v -> body.map(b -> v + b)));
    }

    private static String prefix(String key) {
        return key.substring(0, Sentinels.prefixLength(key));
    }
}
