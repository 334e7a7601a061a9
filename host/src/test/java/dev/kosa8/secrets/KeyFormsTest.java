package dev.kosa8.secrets;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.secrets.KeyForms.Encoding;
import dev.kosa8.secrets.KeyForms.Form;
import java.util.Base64;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** The forms of a key, checked against the JDK's own base64 encoders and decoders. */
class KeyFormsTest {

    /** A key and its sentinel: same vendor prefix, same length, random parts that differ at every position. */
    record Pair(String key, String sentinel) {
    }

    static final String ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

    @Provide
    static Arbitrary<Pair> pairs() {
        Arbitrary<String> vendor = Arbitraries.of("", "sk-", "sk-ant-api03-", "ghp_", "xoxb-", "AKIA");
        Arbitrary<Integer> length = Arbitraries.integers().between(8, 120);
        return Combinators.combine(vendor, length).flatAs((v, n) -> {
            Arbitrary<String> body = Arbitraries.strings().withChars(ALNUM).ofLength(n);
            return Combinators.combine(body, body).filter(KeyFormsTest::differEverywhere)
                    .as((k, s) -> new Pair(v + k, v + s));
        });
    }

    static boolean differEverywhere(String a, String b) {
        for (int i = 0; i < a.length(); i++) {
            if (a.charAt(i) == b.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    @Property(tries = 1000)
    void aKeyAtAnyOffsetOfBase64DataShowsItsFormWhichSwapsForTheSentinels(@ForAll("pairs") Pair pair,
            @ForAll @Size(max = 13) byte[] prefix, @ForAll @Size(max = 13) byte[] suffix, @ForAll boolean url) {
        byte[] key = pair.key().getBytes(US_ASCII);
        byte[] sentinel = pair.sentinel().getBytes(US_ASCII);
        byte[] data = concat(prefix, key, suffix);
        Base64.Encoder encoder = url ? Base64.getUrlEncoder() : Base64.getEncoder();
        Base64.Decoder decoder = url ? Base64.getUrlDecoder() : Base64.getDecoder();
        String encoded = encoder.encodeToString(data);

        int a = prefix.length % 3;
        Form form = KeyForms.of(pair.key(), pair.sentinel()).forms().stream()
                .filter(f -> f.encoding() == (url ? Encoding.BASE64URL : Encoding.BASE64) && f.alignment() == a)
                .findFirst().orElseThrow();
        // the run starts ceil(4a/3) characters into the 4 characters of the key's first 3-byte group
        int at = 4 * (prefix.length - a) / 3 + (4 * a + 2) / 3;
        assertThat(encoded.substring(at, at + form.text().length())).isEqualTo(form.text());

        String swapped = encoded.substring(0, at) + form.counterpart()
                + encoded.substring(at + form.text().length());
        byte[] decoded = decoder.decode(swapped);

        assertThat(decoded).hasSize(data.length);
        assertThat(slice(decoded, 0, prefix.length)).isEqualTo(prefix);
        assertThat(slice(decoded, prefix.length + key.length, suffix.length)).isEqualTo(suffix);
        byte[] middle = slice(decoded, prefix.length, key.length);
        assertThat(middle).isEqualTo(hybrid(key, sentinel, a));
        if (a == 0 && key.length % 3 == 0) {
            assertThat(middle).isEqualTo(sentinel); // no character is shared with a neighbour
        }
        assertThat(indexOf(decoded, key)).isEqualTo(-1);
    }

    /**
     * What decoding gives where the key was once its run is swapped: the sentinel, except the bits
     * that the boundary characters, left as they were, still carry from the key: the first byte's
     * top 4 bits (a = 1) or 2 bits (a = 2), the last byte's low 2 bits ((a+n) mod 3 = 1) or 4 bits
     * ((a+n) mod 3 = 2).
     */
    static byte[] hybrid(byte[] key, byte[] sentinel, int a) {
        int head = new int[] {0, 4, 2}[a];
        int tail = new int[] {0, 2, 4}[(a + key.length) % 3];
        byte[] out = sentinel.clone();
        int top = (0xFF << (8 - head)) & 0xFF;
        out[0] = (byte) ((key[0] & top) | (sentinel[0] & ~top));
        int low = (1 << tail) - 1;
        int last = key.length - 1;
        out[last] = (byte) ((key[last] & low) | (out[last] & ~low));
        return out;
    }

    @Property(tries = 300)
    void theRawFormIsTheKeyAndItsCounterpartTheSentinel(@ForAll("pairs") Pair pair) {
        Form raw = KeyForms.of(pair.key(), pair.sentinel()).forms().getFirst();
        assertThat(raw.encoding()).isEqualTo(Encoding.RAW);
        assertThat(raw.text()).isEqualTo(pair.key());
        assertThat(raw.counterpart()).isEqualTo(pair.sentinel());
    }

    @Property(tries = 300)
    void everyFormIsAsLongAsItsCounterpartAndNoneIsShort(@ForAll("pairs") Pair pair) {
        KeyForms forms = KeyForms.of(pair.key(), pair.sentinel());
        assertThat(forms.forms()).hasSize(7);
        assertThat(forms.forms()).allSatisfy(f -> {
            assertThat(f.counterpart()).hasSameSizeAs(f.text());
            assertThat(f.text().length()).isGreaterThanOrEqualTo(KeyForms.MIN_LENGTH);
        });
        assertThat(forms.minLength()).isGreaterThanOrEqualTo(KeyForms.MIN_LENGTH);
        assertThat(forms.maxLength()).isLessThanOrEqualTo(4 * (pair.key().length() + 2) / 3);
    }

    @Property(tries = 500)
    void keysOfLettersDigitsDashesAndUnderscoresHaveOneFormInBothAlphabets(@ForAll("urlSafe") String key) {
        KeyForms forms = KeyForms.of(key);
        for (int a = 0; a < 3; a++) {
            assertThat(forms.forms().get(4 + a).text()).isEqualTo(forms.forms().get(1 + a).text());
        }
    }

    @Provide
    static Arbitrary<String> urlSafe() {
        return Arbitraries.strings().withChars(ALNUM + "-_").ofMinLength(8).ofMaxLength(120);
    }

    @Test
    void aBasicCredentialCarriesTheKeyAtAlignmentTwoAndLosesItWhenSwapped() {
        String key = "sk-ant-api03-Zr8qLwP2vXk9T";
        String sentinel = "sk-ant-api03-Mh3bNc7YdFs1Q";
        String header = Base64.getEncoder().encodeToString(("user:" + key).getBytes(US_ASCII));
        Form form = KeyForms.of(key, sentinel).forms().stream()
                .filter(f -> f.encoding() == Encoding.BASE64 && f.alignment() == 2).findFirst().orElseThrow();
        assertThat(header).contains(form.text());

        String decoded = new String(Base64.getDecoder().decode(header.replace(form.text(), form.counterpart())),
                ISO_8859_1);
        assertThat(decoded).startsWith("user:").doesNotContain(key);
        // 'user:' is 5 bytes, so the key starts at a = 2: the character holding the colon's low 4 bits
        // and the first 's''s top 2 bits stays, and 's' and 's' agree in those 2 bits anyway; at the
        // end (2 + 26) mod 3 = 1, so the last byte keeps the key's low 2 bits: 'T' (0x54) under 'Q'
        // (0x51) becomes 0x50, 'P'
        assertThat(decoded).isEqualTo("user:sk-ant-api03-Mh3bNc7YdFs1P");
    }

    @Test
    void aKeyAlignedOnAGroupAndAMultipleOfThreeLongSwapsExactly() {
        String key = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"; // 42 bytes
        String sentinel = "ghp_ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqpo";
        String encoded = Base64.getEncoder().encodeToString(("abc" + key + "xyz").getBytes(US_ASCII));
        Form form = KeyForms.of(key, sentinel).forms().get(1);
        assertThat(form.encoding()).isEqualTo(Encoding.BASE64);
        assertThat(form.alignment()).isZero();
        assertThat(form.text()).hasSize(56);
        String decoded = new String(Base64.getDecoder().decode(encoded.replace(form.text(), form.counterpart())),
                US_ASCII);
        assertThat(decoded).isEqualTo("abc" + sentinel + "xyz");
    }

    @Test
    void base64AndBase64UrlFormsAreTheSameTextWhenTheRunHasNeitherPlusNorSlash() {
        // 0x41 never has six set bits in a row, so no character 62 or 63 appears at any alignment
        KeyForms forms = KeyForms.of("AAAAAAAAA", "BBBBBBBBB");
        for (int a = 0; a < 3; a++) {
            assertThat(forms.forms().get(1 + a).text()).isEqualTo(forms.forms().get(4 + a).text());
        }
        KeyForms slashes = KeyForms.of("????????????", "AAAAAAAAAAAA"); // '?' is 0x3F: runs of 6 set bits
        assertThat(slashes.forms().get(1).text()).isEqualTo("Pz8/Pz8/Pz8/Pz8/");
        assertThat(slashes.forms().get(4).text()).isEqualTo("Pz8_Pz8_Pz8_Pz8_");
    }

    @Test
    void shortUnequalOrNonAsciiValuesAreRefused() {
        assertThatThrownBy(() -> KeyForms.of("sk-1234", "sk-abcd")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("too short");
        assertThatThrownBy(() -> KeyForms.of("sk-12345678", "sk-1234567")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("same length");
        assertThatThrownBy(() -> KeyForms.of("sk-1234567é", "sk-12345678")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ASCII");
        assertThatThrownBy(() -> KeyForms.of("sk-12345678".getBytes(US_ASCII), new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -1}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ASCII");
    }

    @Test
    void noFormShowsItsTextWhenPrinted() {
        String key = "sk-ant-api03-Zr8qLwP2vXk9T";
        KeyForms forms = KeyForms.of(key, "sk-ant-api03-Mh3bNc7YdFs1Q");
        assertThat(forms.toString()).doesNotContain("Zr8q");
        for (Form f : forms.forms()) {
            assertThat(forms.toString()).doesNotContain(f.text()).doesNotContain(f.counterpart());
        }
    }

    static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    static byte[] slice(byte[] a, int from, int length) {
        byte[] out = new byte[length];
        System.arraycopy(a, from, out, 0, length);
        return out;
    }

    static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
