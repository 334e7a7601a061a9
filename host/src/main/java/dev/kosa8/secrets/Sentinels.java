package dev.kosa8.secrets;

import java.security.SecureRandom;
import java.util.random.RandomGenerator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The placeholder a sandbox sees instead of a real key. The broker swaps it
 * for the real key in requests to the secret's host, and the real key back
 * for it in what comes back, so the agent never holds the key itself.
 *
 * <p>Its shape follows the key's, because clients check it: SDKs refuse an
 * OpenAI key that does not start with {@code sk-}, or a GitHub token without
 * {@code ghp_}, before they send anything. So the sentinel keeps the vendor's
 * prefix ({@code sk-ant-api03-}, {@code sk-proj-}, {@code github_pat_},
 * {@code xoxb-}): up to three lower-case words each ending in {@code -} or
 * {@code _}, at most 16 characters and at most half the key, so that a key
 * that merely happens to start like that gives away little. Everything after
 * the prefix is random letters and digits: nothing of the key's own material
 * leaks into the sandbox.
 *
 * <p>It has exactly the key's length, so the broker can replace one by the
 * other in a response without changing its length, and with it any
 * {@code Content-Length} or chunk size already sent.
 */
public final class Sentinels {
    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    private static final Pattern WORD = Pattern.compile("[a-z][a-z0-9]{0,7}[-_]");
    private static final int MAX_WORDS = 3;
    private static final int MAX_PREFIX = 16;
    private static final RandomGenerator SECURE = new SecureRandom();

    private Sentinels() {
    }

    /** A sentinel for {@code realValue}, from a {@link SecureRandom}. */
    public static String mint(String realValue) {
        return mint(realValue, SECURE);
    }

    /** A sentinel for {@code realValue}, its random part drawn from {@code rng}; never equal to {@code realValue}. */
    public static String mint(String realValue, RandomGenerator rng) {
        if (realValue == null || realValue.isEmpty()) {
            throw new IllegalArgumentException("no value to make a sentinel for");
        }
        int keep = prefixLength(realValue);
        String prefix = realValue.substring(0, keep);
        String rest = realValue.substring(keep);
        char[] random = new char[rest.length()];
        String drawn;
        do {
            for (int i = 0; i < random.length; i++) {
                random[i] = ALPHABET.charAt(rng.nextInt(ALPHABET.length()));
            }
            drawn = new String(random);
        } while (drawn.equals(rest));
        return prefix + drawn;
    }

    /**
     * How many leading characters are the vendor's prefix: the longest run of
     * up to three words {@code [a-z][a-z0-9]{0,7}[-_]} that is at most 16
     * characters and at most half the value.
     */
    static int prefixLength(String value) {
        int cap = Math.min(MAX_PREFIX, value.length() / 2);
        Matcher m = WORD.matcher(value);
        int end = 0;
        for (int words = 0; words < MAX_WORDS; words++) {
            m.region(end, value.length());
            if (!m.lookingAt() || m.end() > cap) {
                break;
            }
            end = m.end();
        }
        return end;
    }
}
