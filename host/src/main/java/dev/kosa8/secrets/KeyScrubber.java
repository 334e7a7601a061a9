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
 * <p>Where forms overlap in a text, the leftmost wins, and at one position the longest. A replacement
 * can join with the text beside it into a new form (the text before it ends like a key's first
 * characters and the sentinel's form begins with the key's last one), so after each replacement the
 * search goes back one form's length and looks again: the output is the text with the leftmost
 * form replaced over and over until none is left, and it holds no form of any key. Two keys, or the base64 and base64url forms of one key,
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

    /**
     * The length of the longest form. A session holds back at most twice this less two bytes: the
     * start of a form that may still be completed, and before it what a replacement there could join
     * with.
     */
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
        boolean[] changed = {false};
        replaceAll(a, 0, a.length, true, (at, swap) -> changed[0] = true);
        if (!changed[0]) {
            return value;
        }
        char[] out = value.toCharArray();
        for (int i = 0; i < out.length; i++) {
            if (out[i] < 0x80) { // a replaced character, or the one that was there
                out[i] = (char) a[i];
            }
        }
        return new String(out);
    }

    /** Told of each replacement {@link #replaceAll} made: where, and with what. */
    @FunctionalInterface
    private interface Replaced {
        void at(int position, byte[] swap);
    }

    /**
     * Replaces forms in {@code a[0, end)} in place, leftmost first; after each, the search goes back a
     * form's length less one, where the replacement may have made a form with the bytes before it. Stops
     * when no form starts before the first position that cannot be decided without more bytes, and
     * returns that position ({@code end} when {@code last}, or when nothing in the tail could begin a
     * form).
     *
     * @param floor where the bytes that may still change begin: a form starting before it throws
     */
    private int replaceAll(byte[] a, int floor, int end, boolean last, Replaced replaced) {
        int back = search.maxLength() - 1;
        int budget = replacementBudget(end);
        int from = 0; // the bytes before floor too: a form there means the last replacement made one
        while (true) {
            long r = search.find(a, from, end, last);
            int id = Search.pattern(r);
            int at = Search.position(r);
            if (id < 0) {
                return at;
            }
            if (at < floor) {
                throw new IllegalStateException("replacing a key in this response would make a key's form "
                        + "across bytes already sent; the response is cut off");
            }
            budget = spend(budget);
            byte[] swap = replacements[id];
            System.arraycopy(swap, 0, a, at, swap.length);
            replaced.at(at, swap);
            from = Math.max(0, at - back);
        }
    }

    /**
     * The scrubbing of one response body, fed in the chunks it arrives in. A form split across two
     * chunks is still found: each {@link #feed} returns all it can be sure of and holds back the
     * tail that could still change, until more comes or {@link #finish} says nothing will: the
     * start of a form that more bytes may complete (at most {@code maxFormLength() - 1} bytes), and
     * before it as many bytes again, with which that form's replacement could make a new form. What
     * goes out adds up to exactly what came in, byte for byte in length.
     *
     * <p>A replacement that would make a form reaching further back, into bytes already handed
     * out, cannot be mended: the session then throws, and the broker cuts the response off rather
     * than let a key through. Only a chain of replacements each re-creating the next could do this
     * (each step back needs a sentinel's form to begin where a key's form ends); random keys and
     * sentinels never meet it in practice, and a single one is handled in full.
     *
     * <p>The bytes of a chunk are copied once into a scratch array to be searched (a memory copy
     * is far cheaper than reading a direct buffer byte by byte) and replacements are written back
     * into the chunk itself, which is then handed on, cut short by what is held back; no new buffer
     * is made for the bulk of a body. The scratch array grows to the largest chunk plus what is
     * held and the last form's length of bytes handed out. Not thread-safe: one session belongs to
     * one response on one event loop.
     */
    public final class Session {

        /**
         * {@code buf[0, sent)}: the last bytes handed out (fewer than a form), kept to see a form a
         * replacement would make across them; then the {@code held} bytes held back.
         */
        private byte[] buf = new byte[0];
        private int sent;
        private int held;
        private boolean finished;

        private Session() {
        }

        /**
         * Scrubs the next chunk. Takes ownership of {@code in}, whose readable bytes are the chunk,
         * and may write into it; the caller must not use it again. The returned buffer, which the
         * caller owns, may be {@code in} itself, shorter, and may be empty.
         *
         * @throws IllegalStateException if replacing a key would make a form across bytes already
         *                               handed out; the response must then be cut off
         */
        public ByteBuf feed(ByteBuf in) {
            if (finished) {
                in.release();
                throw new IllegalStateException("the session is finished");
            }
            if (search == null) {
                return in;
            }
            int inStart = sent + held;
            int total;
            int stop;
            try {
                if (in.isReadOnly()) {
                    ByteBuf copy = in.alloc().buffer(in.readableBytes()).writeBytes(in);
                    in.release();
                    in = copy;
                }
                int n = in.readableBytes();
                total = inStart + n;
                if (buf.length < total) {
                    buf = Arrays.copyOf(buf, Math.max(total, 2 * buf.length)); // doubling; past 1 GiB, just enough
                }
                in.getBytes(in.readerIndex(), buf, inStart, n);
                stop = scan(total, false, in, inStart);
            } catch (RuntimeException | Error e) {
                in.release();
                throw e;
            }
            return emit(stop, total, in, inStart);
        }

        /**
         * What is still held back, scrubbed; the session takes no more after this.
         *
         * @throws IllegalStateException as {@link #feed} does
         */
        public ByteBuf finish() {
            if (finished) {
                throw new IllegalStateException("the session is finished");
            }
            finished = true;
            if (held == 0) {
                buf = null;
                return Unpooled.EMPTY_BUFFER;
            }
            int total = sent + held;
            scan(total, true, null, total);
            ByteBuf out = Unpooled.wrappedBuffer(Arrays.copyOfRange(buf, sent, total));
            held = 0;
            buf = null;
            return out;
        }

        /**
         * Replaces forms in {@code buf[0, total)}, leftmost first, until none is left that starts
         * before the first position that cannot be decided without more bytes, and returns the first
         * position that may still change: {@code total} when {@code last} or when no form can start
         * in the tail, else a form's length less one before the undecided start, which a replacement
         * there could join with. The part of each replacement from {@code inStart} on is also written
         * into {@code in}, whose readable bytes are {@code buf[inStart, total)}.
         */
        private int scan(int total, boolean last, ByteBuf in, int inStart) {
            int at = replaceAll(buf, sent, total, last, (p, swap) -> {
                int end = p + swap.length;
                if (in != null && end > inStart) {
                    int begin = Math.max(p, inStart);
                    in.setBytes(in.readerIndex() + begin - inStart, swap, begin - p, end - begin);
                }
            });
            return at == total ? total : Math.max(sent, at - (search.maxLength() - 1));
        }

        /**
         * Hands out {@code buf[sent, stop)}, keeps {@code buf[stop, total)} as the new held bytes and
         * up to a form's length less one before it as the new sent ones.
         */
        private ByteBuf emit(int stop, int total, ByteBuf in, int inStart) {
            int fromHeld = Math.min(stop, inStart) - sent;
            ByteBuf head = fromHeld <= 0 ? null : Unpooled.wrappedBuffer(Arrays.copyOfRange(buf, sent, sent + fromHeld));
            ByteBuf out;
            if (stop <= inStart) {
                in.release();
                out = head == null ? Unpooled.EMPTY_BUFFER : head;
            } else {
                in.writerIndex(in.readerIndex() + stop - inStart);
                out = head == null ? in : Unpooled.wrappedBuffer(head, in);
            }
            int keep = Math.max(0, stop - (search.maxLength() - 1));
            sent = stop - keep;
            held = total - stop;
            System.arraycopy(buf, keep, buf, 0, total - keep);
            return out;
        }
    }

    /**
     * How many replacements a text of this length may take. Without forms re-creating one another,
     * each replacement moves the search on by a whole form (at least 2 bytes), so half the length
     * would do; the rest is room for replacements that join with their neighbours.
     */
    private static int replacementBudget(int length) {
        return length + 16;
    }

    /** One replacement taken from the budget; forms that keep re-creating one another end here. */
    private static int spend(int budget) {
        if (budget <= 0) {
            throw new IllegalStateException("the keys' forms keep re-creating one another in this text; "
                    + "it is cut off rather than scrubbed");
        }
        return budget - 1;
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
        /** The bytes some pattern begins with. */
        private final boolean[] firstBytes = new boolean[256];

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
                firstBytes[p[0] & 0xFF] = true;
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
         * but run past {@code end} (its bytes up to {@code end} begin the pattern), or {@code end}
         * if there is none. Everything before that position is known to start no match.
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
            if (last) {
                return result(end, -1);
            }
            // no pattern fits from s on: the first position whose bytes begin some pattern is undecided
            for (int t = s; t < end; t++) {
                if (couldStart(a, t, end)) {
                    return result(t, -1);
                }
            }
            return result(end, -1);
        }

        /** Whether {@code a[t, end)}, shorter than every pattern, is the beginning of one. */
        private boolean couldStart(byte[] a, int t, int end) {
            if (end - t == 1) {
                return firstBytes[a[t] & 0xFF];
            }
            int[] ids = byHead[head(a[t], a[t + 1])];
            if (ids != null) {
                for (int id : ids) {
                    if (Arrays.equals(a, t, end, patterns[id], 0, end - t)) {
                        return true;
                    }
                }
            }
            return false;
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
