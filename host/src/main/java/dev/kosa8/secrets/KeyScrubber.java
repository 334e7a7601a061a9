package dev.kosa8.secrets;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Replaces every form of the real keys in what an upstream sends back with the same form of the
 * key's sentinel, so a response that echoes a request (an error message quoting the Authorization
 * header, say) never carries a real key into the guest. Each form and its replacement have the same
 * length ({@link KeyForms}), so bodies keep their length and a Content-Length stays true.
 *
 * <p>Where forms overlap in a text, the leftmost wins, and at one position the longest; the text
 * after a replacement is searched afresh. Two keys, or the base64 and base64url forms of one key,
 * can have identical forms with different replacements; the first in {@link KeyForms} order of the
 * first key given wins, so an alphabet-neutral run is replaced by the sentinel's standard base64
 * form. Either choice removes the key; the guest may then fail to decode that one base64url text.
 * Keys of letters, digits, {@code -} and {@code _} never meet this: their two forms are one text,
 * and so are their sentinels' ({@link KeyForms}).
 *
 * <p>A scrubber is immutable and may serve many responses at once; each has its own {@link Session}.
 *
 * <p>Bodies must be scrubbed as the content the guest reads: after de-chunking, and before any
 * content coding is applied or after it is removed. A gzip body hides the key from any byte search,
 * so the broker has to keep responses from the bound host in identity coding.
 */
public final class KeyScrubber {

    private final Search search;
    private final byte[][] replacements;

    /**
     * A scrubber for these keys, each given as the forms of the real value paired with its
     * sentinel's. Refuses keys whose sentinels hold a form of a real key, as scrubbing would then
     * write that key into responses (random sentinels never do).
     */
    public KeyScrubber(List<KeyForms> keys) {
        List<byte[]> patterns = new ArrayList<>();
        List<byte[]> swaps = new ArrayList<>();
        for (KeyForms key : keys) {
            for (KeyForms.Form form : key.forms()) {
                patterns.add(form.text().getBytes(StandardCharsets.US_ASCII));
                swaps.add(form.counterpart().getBytes(StandardCharsets.US_ASCII));
            }
        }
        this.search = patterns.isEmpty() ? null : new Search(patterns);
        this.replacements = swaps.toArray(byte[][]::new);
        for (byte[] swap : replacements) {
            if (Search.pattern(search.find(swap, 0, swap.length, true)) >= 0) {
                throw new IllegalArgumentException("a sentinel holds a form of a real key, which scrubbing would "
                        + "put into responses");
            }
        }
    }

    /** A scrubber for real values mapped to their sentinels, in the map's iteration order. */
    public static KeyScrubber of(Map<String, String> sentinelByRealValue) {
        return new KeyScrubber(new LinkedHashMap<>(sentinelByRealValue).entrySet().stream()
                .map(e -> KeyForms.of(e.getKey(), e.getValue())).toList());
    }

    /** The length of the longest form; a session holds back at most one byte less. */
    public int maxFormLength() {
        return search == null ? 0 : search.maxLength();
    }

    /** A scrubber for one response body. */
    public Session session() {
        return new Session();
    }

    /**
     * A header value with every form replaced. Characters beyond ASCII are kept and never take part
     * in a match, as no form has any.
     */
    public String scrub(String value) {
        if (search == null || value.length() < search.minLength()) {
            return value;
        }
        byte[] a = new byte[value.length()];
        for (int i = 0; i < a.length; i++) {
            char c = value.charAt(i);
            a[i] = c < 0x80 ? (byte) c : (byte) 0xFF;
        }
        char[] out = null;
        int from = 0;
        while (true) {
            long r = search.find(a, from, a.length, true);
            int id = Search.pattern(r);
            if (id < 0) {
                return out == null ? value : new String(out);
            }
            if (out == null) {
                out = value.toCharArray();
            }
            int at = Search.position(r);
            byte[] swap = replacements[id];
            for (int i = 0; i < swap.length; i++) {
                out[at + i] = (char) swap[i];
            }
            from = at + swap.length;
        }
    }

    /**
     * The scrubbing of one response body, fed in the chunks it arrives in. A form split across two
     * chunks is still found: each {@link #feed} returns all it can be sure of and holds back the
     * tail that could be the start of a form, at most {@code maxFormLength() - 1} bytes, until more
     * comes or {@link #finish} says nothing will. What goes out adds up to exactly what came in,
     * byte for byte in length.
     *
     * <p>The bytes of a chunk are copied once into a scratch array to be searched (a memory copy
     * is far cheaper than reading a direct buffer byte by byte) and replacements are written back
     * into the chunk itself, which is then handed on, cut short by what is held back; no new buffer
     * is made for the bulk of a body. The scratch array grows to the largest chunk plus the held
     * tail. Not thread-safe: one session belongs to one response on one event loop.
     */
    public final class Session {

        private byte[] buf = new byte[0];
        private int held;
        private boolean finished;

        private Session() {
        }

        /**
         * Scrubs the next chunk. Takes ownership of {@code in}, whose readable bytes are the chunk,
         * and may write into it; the caller must not use it again. The returned buffer, which the
         * caller owns, may be {@code in} itself, shorter, and may be empty.
         */
        public ByteBuf feed(ByteBuf in) {
            if (finished) {
                in.release();
                throw new IllegalStateException("the session is finished");
            }
            if (search == null) {
                return in;
            }
            int total;
            int stop;
            try {
                if (in.isReadOnly()) {
                    ByteBuf copy = in.alloc().buffer(in.readableBytes()).writeBytes(in);
                    in.release();
                    in = copy;
                }
                int n = in.readableBytes();
                total = held + n;
                if (buf.length < total) {
                    buf = Arrays.copyOf(buf, Math.max(total, 2 * buf.length)); // doubling; past 1 GiB, just enough
                }
                in.getBytes(in.readerIndex(), buf, held, n);
                stop = scan(total, false, in);
            } catch (RuntimeException | Error e) {
                in.release();
                throw e;
            }
            return emit(stop, total, in);
        }

        /** What is still held back, scrubbed; the session takes no more after this. */
        public ByteBuf finish() {
            if (finished) {
                throw new IllegalStateException("the session is finished");
            }
            finished = true;
            if (held == 0) {
                buf = null;
                return Unpooled.EMPTY_BUFFER;
            }
            scan(held, true, null);
            ByteBuf out = Unpooled.wrappedBuffer(Arrays.copyOf(buf, held));
            held = 0;
            buf = null;
            return out;
        }

        /**
         * Replaces the forms found in {@code buf[0, total)} and returns the first position that
         * cannot be decided without more bytes ({@code total} when {@code last}). The part of each
         * replacement beyond the held tail is also written into {@code in}, whose readable bytes
         * are {@code buf[held, total)}.
         */
        private int scan(int total, boolean last, ByteBuf in) {
            int from = 0;
            while (true) {
                long r = search.find(buf, from, total, last);
                int id = Search.pattern(r);
                int at = Search.position(r);
                if (id < 0) {
                    return at;
                }
                byte[] swap = replacements[id];
                System.arraycopy(swap, 0, buf, at, swap.length);
                int end = at + swap.length;
                if (in != null && end > held) {
                    int start = Math.max(at, held);
                    in.setBytes(in.readerIndex() + start - held, swap, start - at, end - start);
                }
                from = end;
            }
        }

        /** Hands out {@code buf[0, stop)} and keeps {@code buf[stop, total)} as the new held tail. */
        private ByteBuf emit(int stop, int total, ByteBuf in) {
            int fromHeld = Math.min(stop, held);
            ByteBuf head = fromHeld == 0 ? null : Unpooled.wrappedBuffer(Arrays.copyOf(buf, fromHeld));
            ByteBuf out;
            if (stop <= held) {
                in.release();
                out = head == null ? Unpooled.EMPTY_BUFFER : head;
            } else {
                in.writerIndex(in.readerIndex() + stop - held);
                out = head == null ? in : Unpooled.wrappedBuffer(head, in);
            }
            held = total - stop;
            System.arraycopy(buf, stop, buf, 0, held);
            return out;
        }
    }

    /**
     * A search for many byte patterns at once (Wu–Manber with 2-byte blocks): a window as long as
     * the shortest pattern slides over the text, and the last two bytes of the window say how far
     * it may jump without passing the start of any pattern. Where they appear nowhere in the
     * patterns' leading bytes it jumps the whole window less one byte; on a text without matches
     * it reads about one byte pair per window length, which is why a scan of a body that holds no
     * key costs little more than copying it. Only where the pair ends the window-long prefix of
     * some pattern are the patterns starting at that position compared in full.
     *
     * <p>Identical patterns are searched once, under the first one's index.
     */
    static final class Search {

        private static final int HEADS = 1 << 12;

        private final byte[][] patterns;
        private final int window;
        private final int min;
        private final int max;
        /** For each 2-byte block, how far the window may jump when it ends with the block. */
        private final byte[] shift = new byte[1 << 16];
        /** Pattern indices by a hash of their first two bytes, longest first. */
        private final int[][] byHead = new int[HEADS][];

        /** @param patterns each at least 2 bytes long */
        Search(List<byte[]> patterns) {
            if (patterns.isEmpty()) {
                throw new IllegalArgumentException("no patterns");
            }
            this.patterns = patterns.toArray(byte[][]::new);
            this.min = patterns.stream().mapToInt(p -> p.length).min().orElseThrow();
            this.max = patterns.stream().mapToInt(p -> p.length).max().orElseThrow();
            if (min < 2) {
                throw new IllegalArgumentException("patterns must be at least 2 bytes long");
            }
            // shifts are kept in unsigned bytes, so the window is at most 256 long
            this.window = Math.min(min, 256);
            Arrays.fill(shift, (byte) (window - 1));
            List<List<Integer>> heads = new ArrayList<>();
            for (int i = 0; i < HEADS; i++) {
                heads.add(null);
            }
            for (int id = 0; id < this.patterns.length; id++) {
                byte[] p = this.patterns[id];
                if (isRepeat(id)) {
                    continue;
                }
                for (int q = 1; q < window; q++) {
                    int block = block(p[q - 1], p[q]);
                    int s = window - 1 - q;
                    if (s < (shift[block] & 0xFF)) {
                        shift[block] = (byte) s;
                    }
                }
                int h = head(p[0], p[1]);
                if (heads.get(h) == null) {
                    heads.set(h, new ArrayList<>());
                }
                heads.get(h).add(id);
            }
            for (int h = 0; h < HEADS; h++) {
                List<Integer> ids = heads.get(h);
                if (ids != null) {
                    // stable: among equally long patterns, the first given is tried first
                    ids.sort(Comparator.comparingInt((Integer id) -> this.patterns[id].length).reversed());
                    byHead[h] = ids.stream().mapToInt(Integer::intValue).toArray();
                }
            }
        }

        int minLength() {
            return min;
        }

        int maxLength() {
            return max;
        }

        /**
         * The leftmost (then longest) match in {@code a[from, end)}, as {@link #position} and
         * {@link #pattern}; without one, pattern is -1 and position is where the search stopped:
         * {@code end} if {@code last}, else the first position where a pattern could start
         * but run past {@code end}. Everything before that position is known to start no match.
         */
        long find(byte[] a, int from, int end, boolean last) {
            final int m = window;
            final byte[] shift = this.shift;
            final int limit = end - m;
            int s = from;
            while (s <= limit) {
                int jump = shift[block(a[s + m - 2], a[s + m - 1])] & 0xFF;
                if (jump != 0) {
                    s += jump;
                    continue;
                }
                int[] ids = byHead[head(a[s], a[s + 1])];
                if (ids != null) {
                    for (int id : ids) {
                        byte[] p = patterns[id];
                        if (s + p.length <= end) {
                            if (Arrays.equals(a, s, s + p.length, p, 0, p.length)) {
                                return result(s, id);
                            }
                        } else if (!last && Arrays.equals(a, s, end, p, 0, end - s)) {
                            return result(s, -1); // could be this pattern: wait for more
                        }
                    }
                }
                s++;
            }
            // no pattern fits from s on, so nothing starts there unless more bytes come
            return result(last ? end : Math.min(s, end), -1);
        }

        static int position(long result) {
            return (int) (result >>> 32);
        }

        static int pattern(long result) {
            return (int) result;
        }

        private static long result(int position, int pattern) {
            return ((long) position << 32) | (pattern & 0xFFFFFFFFL);
        }

        private boolean isRepeat(int id) {
            for (int i = 0; i < id; i++) {
                if (Arrays.equals(patterns[i], patterns[id])) {
                    return true;
                }
            }
            return false;
        }

        private static int block(byte first, byte second) {
            return ((first & 0xFF) << 8) | (second & 0xFF);
        }

        private static int head(byte first, byte second) {
            return (((first & 0xFF) << 4) ^ (second & 0xFF)) & (HEADS - 1);
        }
    }
}
