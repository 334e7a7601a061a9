package dev.kosa8.secrets;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * How fast a session scrubs a large body arriving in 64 KiB direct buffers, as a broker would
 * see a download: printed, not asserted, as the figure depends on the machine and its load. Run
 * with {@code -Dkosa8.throughput=true}. The figure is for the whole path a chunk takes (the
 * copy into the session's scratch array, the search, the hand-back), less the cost of filling
 * and releasing the buffers, which is measured alone first.
 */
@EnabledIfSystemProperty(named = "kosa8.throughput", matches = "true")
class KeyScrubberThroughputTest {

    static final int CHUNK = 64 * 1024;
    static final int BODY = 64 * 1024 * 1024;
    static final int ROUNDS = 8;

    @Test
    void printThroughput() {
        Random random = new Random(42);
        Map<String, String> keys = new LinkedHashMap<>();
        for (int i = 0; i < 3; i++) {
            keys.put(key(random, "sk-ant-api03-", 95), key(random, "sk-ant-api03-", 95));
        }
        keys.put(key(random, "ghp_", 36), key(random, "ghp_", 36));
        KeyScrubber scrubber = KeyScrubber.of(keys);

        byte[] binary = new byte[BODY];
        random.nextBytes(binary);
        byte[] text = jsonish(random, BODY);
        byte[] base64 = Base64.getEncoder().encode(java.util.Arrays.copyOf(binary, BODY / 4 * 3));
        byte[] withKeys = text.clone();
        String echoed = keys.keySet().iterator().next();
        byte[] basic = Base64.getEncoder().encode(("user:" + echoed).getBytes(US_ASCII));
        for (int at = 1000; at + 200 < BODY; at += 4096) { // a key, raw or in Basic, every 4 KiB
            byte[] form = (at / 4096) % 2 == 0 ? echoed.getBytes(US_ASCII) : basic;
            System.arraycopy(form, 0, withKeys, at, form.length);
        }

        for (int warm = 0; warm < 2; warm++) {
            run(scrubber, text, false);
            run(scrubber, withKeys, false);
        }
        report("random bytes, no match", scrubber, binary);
        report("JSON-like text, no match", scrubber, text);
        report("base64 text, no match", scrubber, base64);
        report("text with a key every 4 KiB", scrubber, withKeys);
    }

    static void report(String what, KeyScrubber scrubber, byte[] body) {
        long baseline = Long.MAX_VALUE;
        long total = Long.MAX_VALUE;
        for (int r = 0; r < ROUNDS; r++) {
            baseline = Math.min(baseline, run(scrubber, body, false));
            total = Math.min(total, run(scrubber, body, true));
        }
        double mb = body.length / 1e6;
        System.out.printf("%-30s scrub %7.0f MB/s  (with buffer fill: %6.0f MB/s; fill alone %6.0f MB/s)%n", what,
                mb / ((total - baseline) / 1e9), mb / (total / 1e9), mb / (baseline / 1e9));
    }

    /** Nanoseconds to pass {@code body} through a session in chunks, or only to fill and free the chunks. */
    static long run(KeyScrubber scrubber, byte[] body, boolean scrub) {
        ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
        KeyScrubber.Session session = scrubber.session();
        long out = 0;
        long start = System.nanoTime();
        for (int at = 0; at < body.length; at += CHUNK) {
            ByteBuf chunk = alloc.directBuffer(CHUNK).writeBytes(body, at, Math.min(CHUNK, body.length - at));
            ByteBuf done = scrub ? session.feed(chunk) : chunk;
            out += done.readableBytes();
            done.release();
        }
        ByteBuf rest = session.finish();
        out += rest.readableBytes();
        rest.release();
        long took = System.nanoTime() - start;
        assertThat(out).isEqualTo(body.length);
        return took;
    }

    static String key(Random random, String vendor, int length) {
        String alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        StringBuilder b = new StringBuilder(vendor);
        while (b.length() < length) {
            b.append(alnum.charAt(random.nextInt(alnum.length())));
        }
        return b.toString();
    }

    /** Words, quotes, braces and numbers, roughly the letter mix of an API's JSON. */
    static byte[] jsonish(Random random, int size) {
        String[] words = {"{\"id\":", "\"content\"", ":[{\"type\":\"text\",\"text\":\"", "the ", "model ", "and ",
            "response ", "of ", "request ", "tokens", "\"},", "12345, ", "\"usage\":{", "input_tokens", "}\n"};
        byte[] out = new byte[size];
        int at = 0;
        while (at < size) {
            byte[] w = words[random.nextInt(words.length)].getBytes(US_ASCII);
            int n = Math.min(w.length, size - at);
            System.arraycopy(w, 0, out, at, n);
            at += n;
        }
        return out;
    }
}
