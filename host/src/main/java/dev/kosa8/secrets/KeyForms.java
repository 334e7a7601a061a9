package dev.kosa8.secrets;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * The texts under which one secret value can appear in HTTP traffic, each paired with the same
 * form of a second value of the same length (its counterpart: the sentinel the guest holds in its
 * place). Because a form and its counterpart always have the same length, a scrubber can swap one
 * for the other without changing the length of the text around it, so a response's
 * Content-Length stays true.
 *
 * <p>The forms are the raw value, and the value inside standard base64 and base64url (RFC 4648
 * sections 4 and 5), each at the three alignments explained below. Other encodings (hex, JSON
 * {@code \}-escapes, base64 broken into lines) are not covered.
 *
 * <h2>Alignment</h2>
 * Base64 turns each group of 3 bytes into 4 characters; character {@code k} of the output carries
 * bits {@code [6k, 6k+6)} of the input. A value of {@code n} bytes that sits at byte offset
 * {@code p} of the encoded data holds bits {@code [8p, 8p+8n)}. As 24 bits make exactly 4
 * characters, only {@code a = p mod 3} matters for which characters the value decides: counting
 * characters from the start of the 3-byte group the value starts in, character {@code k} depends on
 * the value's bits alone when {@code 6k >= 8a} and {@code 6k+6 <= 8(a+n)}, that is for
 * {@code ceil(4a/3) <= k < floor(4(a+n)/3)}. That run is the form for alignment {@code a}: it can be
 * computed by encoding {@code a} zero bytes followed by the value and cutting out those characters,
 * and it is the same text whatever bytes surround the value.
 *
 * <p>Around the run sit at most one character on each side that mixes the value's bits with a
 * neighbour's: at the start, for {@code a = 1}, 2 bits of the preceding byte and the first byte's
 * top 4 bits; for {@code a = 2}, 4 bits of the preceding byte and the first byte's top 2 bits. At
 * the end, when {@code (a+n) mod 3} is 1 or 2, the last byte's low 2 or 4 bits and 4 or 2 bits of
 * the next byte. Only {@code a = 0} with {@code n} a multiple of 3 has no such character. A scrubber
 * that matches exact texts leaves these characters as they are: replacing them with the
 * counterpart's would also rewrite the neighbours' bits. So after the run is swapped, the decoded
 * data holds the counterpart with at most its first byte's top 4 bits and its last byte's low 4
 * bits still taken from the real value. It no longer holds the real value, and at most 4 bits of
 * each end byte are exposed (the first byte is usually a public vendor prefix anyway).
 *
 * <h2>Length</h2>
 * Values shorter than {@link #MIN_LENGTH} characters are refused rather than given no forms: a
 * shorter text is too likely to occur by chance in a response, and dropping its forms would leave
 * the value silently unprotected. For a value of at least 8 bytes every base64 run has at least 10
 * characters ({@code floor(4(a+n)/3) - ceil(4a/3)}), so no form is ever too short to mean
 * something.
 *
 * <h2>Two alphabets</h2>
 * Base64 and base64url differ only in characters 62 and 63 ({@code +/} against {@code -_}). For
 * ASCII data these come only from the last character of a group, the low 6 bits of a byte
 * {@code >}, {@code ?}, {@code ~} or DEL: the other three characters of a group each take a bit
 * that is 0 in every ASCII byte. So for keys made of letters, digits, {@code -} and {@code _} the
 * base64 and base64url forms are the same text (the scrubber then uses the standard one).
 *
 * @param forms the forms, raw first, then base64 and base64url at alignments 0, 1 and 2; equal
 *              base64 and base64url texts are both listed, each with its own counterpart
 */
public record KeyForms(List<Form> forms) {

    /** The shortest value accepted, in bytes. */
    public static final int MIN_LENGTH = 8;

    /** How a form is written. */
    public enum Encoding { RAW, BASE64, BASE64URL }

    /**
     * One form of a value, with the same form of the counterpart.
     *
     * @param encoding    how the value is written
     * @param alignment   for base64 forms, the value's byte offset modulo 3 in the encoded data; 0 for
     *                    raw
     * @param text        the characters determined by the value alone (ASCII)
     * @param counterpart the same characters for the counterpart, of the same length
     */
    public record Form(Encoding encoding, int alignment, String text, String counterpart) {

        public Form {
            if (text.length() != counterpart.length()) {
                throw new IllegalArgumentException("a form and its counterpart differ in length");
            }
            if (alignment < 0 || alignment > 2 || (encoding == Encoding.RAW && alignment != 0)) {
                throw new IllegalArgumentException("bad alignment " + alignment + " for " + encoding);
            }
        }

        /** Never the text: forms are made of secrets and must not reach a log by accident. */
        @Override
        public String toString() {
            return "Form[" + encoding + "/" + alignment + ", " + text.length() + " chars]";
        }
    }

    public KeyForms {
        forms = List.copyOf(forms);
        if (forms.isEmpty()) {
            throw new IllegalArgumentException("no forms");
        }
    }

    /** The forms of {@code value}, each paired with the same form of {@code counterpart}. */
    public static KeyForms of(String value, String counterpart) {
        return of(ascii(value), ascii(counterpart));
    }

    /**
     * The forms of {@code value} for searching only: each form is its own counterpart, so nothing
     * would change if it were swapped.
     */
    public static KeyForms of(String value) {
        return of(value, value);
    }

    /** The forms of {@code value}, each paired with the same form of {@code counterpart}; both ASCII. */
    public static KeyForms of(byte[] value, byte[] counterpart) {
        if (value.length != counterpart.length) {
            throw new IllegalArgumentException("a value and its counterpart must have the same length, not "
                    + value.length + " and " + counterpart.length);
        }
        if (value.length < MIN_LENGTH) {
            throw new IllegalArgumentException("a secret of " + value.length + " bytes is too short to scrub; at least "
                    + MIN_LENGTH + " are needed");
        }
        checkAscii(value);
        checkAscii(counterpart);
        List<Form> forms = new ArrayList<>(7);
        forms.add(new Form(Encoding.RAW, 0, text(value), text(counterpart)));
        for (Encoding encoding : List.of(Encoding.BASE64, Encoding.BASE64URL)) {
            Base64.Encoder encoder = encoding == Encoding.BASE64 ? Base64.getEncoder() : Base64.getUrlEncoder();
            for (int a = 0; a < 3; a++) {
                forms.add(new Form(encoding, a, run(encoder, value, a), run(encoder, counterpart, a)));
            }
        }
        return new KeyForms(forms);
    }

    /** The length of the longest form. */
    public int maxLength() {
        return forms.stream().mapToInt(f -> f.text().length()).max().orElseThrow();
    }

    /** The length of the shortest form. */
    public int minLength() {
        return forms.stream().mapToInt(f -> f.text().length()).min().orElseThrow();
    }

    @Override
    public String toString() {
        return "KeyForms" + forms;
    }

    /** The characters of {@code value}'s encoding at alignment {@code a} that depend on it alone. */
    static String run(Base64.Encoder encoder, byte[] value, int a) {
        byte[] shifted = new byte[a + value.length];
        System.arraycopy(value, 0, shifted, a, value.length);
        String encoded = encoder.withoutPadding().encodeToString(shifted);
        int from = (4 * a + 2) / 3; // ceil(4a/3)
        int to = 4 * (a + value.length) / 3; // floor(4(a+n)/3)
        return encoded.substring(from, to);
    }

    private static byte[] ascii(String s) {
        byte[] b = new byte[s.length()];
        for (int i = 0; i < b.length; i++) {
            char c = s.charAt(i);
            if (c > 0x7F) {
                throw new IllegalArgumentException("secrets must be ASCII; found a character at index " + i
                        + " that is not");
            }
            b[i] = (byte) c;
        }
        return b;
    }

    private static void checkAscii(byte[] b) {
        for (int i = 0; i < b.length; i++) {
            if (b[i] < 0) {
                throw new IllegalArgumentException("secrets must be ASCII; byte " + i + " is not");
            }
        }
    }

    private static String text(byte[] ascii) {
        return new String(ascii, StandardCharsets.US_ASCII);
    }
}
