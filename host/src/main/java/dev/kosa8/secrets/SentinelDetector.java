package dev.kosa8.secrets;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Tells which of the guest's sentinels, if any, a request carries. The guest has no reason to send
 * a sentinel anywhere but to the host its key is bound to, where the broker swaps it for the real
 * key; a sentinel on its way elsewhere suggests a prompt-injected agent trying to smuggle out what
 * it takes for a key.
 *
 * <p>A sentinel is found raw, in base64 or base64url at any alignment ({@link KeyForms}), and in
 * any of those forms percent-encoded: with some or all of its characters written {@code %XX}, in
 * either case. Percent-encoding is undone once, so {@code %2541} is read as {@code %41}, not as
 * {@code A}; {@code +} is left alone. This is a tripwire for the obvious ways a sentinel travels
 * (a header, a URL, a JSON body, Basic credentials), not a guarantee: an agent that reverses,
 * hex-encodes or compresses a sentinel is not caught.
 */
public final class SentinelDetector {

    private final KeyScrubber.Search search;
    private final String[] names;
    /** The most raw bytes one match can span: the longest form with every character percent-encoded. */
    private final int reach;

    /**
     * A detector for these sentinels, by name (each at least {@link KeyForms#MIN_LENGTH} ASCII
     * characters). Where two share a form, the first in the map's iteration order is named.
     */
    public SentinelDetector(Map<String, String> sentinels) {
        List<byte[]> patterns = new ArrayList<>();
        List<String> owners = new ArrayList<>();
        int longest = 0;
        for (Map.Entry<String, String> e : new LinkedHashMap<>(sentinels).entrySet()) {
            for (KeyForms.Form form : KeyForms.of(e.getValue()).forms()) {
                patterns.add(form.text().getBytes(StandardCharsets.US_ASCII));
                owners.add(e.getKey());
                longest = Math.max(longest, form.text().length());
            }
        }
        this.search = patterns.isEmpty() ? null : new KeyScrubber.Search(patterns);
        this.names = owners.toArray(String[]::new);
        this.reach = 3 * longest;
    }

    /**
     * How many bytes before a piece of a longer text a search of that piece must also cover to find every
     * match that ends in it: a match spans at most this many raw bytes (each character written {@code %XX}),
     * and percent-decoding a text from some byte on agrees with decoding it from its start after at most two
     * bytes. A caller that searches a text piece by piece keeps this many of the last bytes before each piece.
     */
    public int reach() {
        return reach + 2;
    }

    /**
     * The name of the sentinel whose form starts first in {@code text}, or, if none appears as
     * it stands, first once percent-encoding is undone. Characters beyond ASCII never match.
     */
    public Optional<String> find(CharSequence text) {
        byte[] a = new byte[text.length()];
        for (int i = 0; i < a.length; i++) {
            char c = text.charAt(i);
            a[i] = c < 0x80 ? (byte) c : (byte) 0xFF;
        }
        return find(a, a.length);
    }

    /** As {@link #find(CharSequence)}, over the readable bytes, which stay unread. */
    public Optional<String> find(ByteBuf bytes) {
        byte[] a = ByteBufUtil.getBytes(bytes, bytes.readerIndex(), bytes.readableBytes(), false);
        return find(a, a.length);
    }

    /** As {@link #find(CharSequence)}, over {@code a[0, length)}, which stays as it is. */
    public Optional<String> find(byte[] a, int length) {
        if (search == null) {
            return Optional.empty();
        }
        Optional<String> plain = first(a, length);
        if (plain.isPresent() || indexOfPercent(a, length) < 0) {
            return plain;
        }
        byte[] decoded = new byte[length];
        return first(decoded, percentDecode(a, length, decoded));
    }

    private Optional<String> first(byte[] a, int length) {
        int id = KeyScrubber.Search.pattern(search.find(a, 0, length, true));
        return id < 0 ? Optional.empty() : Optional.of(names[id]);
    }

    private static int indexOfPercent(byte[] a, int length) {
        for (int i = 0; i < length; i++) {
            if (a[i] == '%') {
                return i;
            }
        }
        return -1;
    }

    /** Writes {@code a[0, length)} into {@code out} with each {@code %XX} turned into its byte; returns the length. */
    static int percentDecode(byte[] a, int length, byte[] out) {
        int n = 0;
        for (int i = 0; i < length; i++) {
            if (a[i] == '%' && i + 2 < length) {
                int high = hex(a[i + 1]);
                int low = hex(a[i + 2]);
                if (high >= 0 && low >= 0) {
                    out[n++] = (byte) (high << 4 | low);
                    i += 2;
                    continue;
                }
            }
            out[n++] = a[i];
        }
        return n;
    }

    private static int hex(byte b) {
        if (b >= '0' && b <= '9') {
            return b - '0';
        }
        if (b >= 'a' && b <= 'f') {
            return b - 'a' + 10;
        }
        if (b >= 'A' && b <= 'F') {
            return b - 'A' + 10;
        }
        return -1;
    }
}
