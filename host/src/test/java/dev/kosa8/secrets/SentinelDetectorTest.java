package dev.kosa8.secrets;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** Each form a sentinel can travel in, near misses that must not count, and hostile bytes. */
class SentinelDetectorTest {

    static final String ANTHROPIC = "sk-ant-api03-Mh3bNc7YdFs1QaRwT5uV";
    static final String GITHUB = "ghp_Q2w3E4r5T6y7U8i9O0pAsDfGhJkLzXcVbN";
    static final SentinelDetector DETECTOR = new SentinelDetector(linked("anthropic", ANTHROPIC, "github", GITHUB));

    @Test
    void aRawSentinelIsNamedInTextAndInBytes() {
        assertThat(DETECTOR.find("x-api-key: " + ANTHROPIC)).contains("anthropic");
        assertThat(DETECTOR.find("GET /?token=" + GITHUB + " HTTP/1.1")).contains("github");
        assertThat(DETECTOR.find(Unpooled.copiedBuffer("{\"k\":\"" + ANTHROPIC + "\"}", US_ASCII))).contains("anthropic");
    }

    @Test
    void theSentinelThatStartsFirstIsNamed() {
        assertThat(DETECTOR.find(GITHUB + " " + ANTHROPIC)).contains("github");
        assertThat(DETECTOR.find(ANTHROPIC + " " + GITHUB)).contains("anthropic");
    }

    @Test
    void aSentinelInBase64IsFoundAtEveryAlignment() {
        for (String before : List.of("", "u", "us", "user:", "user:x", "{\"api_key\":\"")) {
            byte[] data = (before + ANTHROPIC + "\"}").getBytes(US_ASCII);
            assertThat(DETECTOR.find("Basic " + Base64.getEncoder().encodeToString(data))).as(before).contains("anthropic");
            assertThat(DETECTOR.find("?d=" + Base64.getUrlEncoder().withoutPadding().encodeToString(data)))
                    .as(before).contains("anthropic");
        }
    }

    @Test
    void aPercentEncodedSentinelIsFoundInEitherCaseAndMixedWithPlainCharacters() {
        assertThat(DETECTOR.find("q=" + percent(GITHUB, "all", false))).contains("github");
        assertThat(DETECTOR.find("q=" + percent(GITHUB, "all", true))).contains("github");
        assertThat(DETECTOR.find("q=" + percent(GITHUB, "every other", true))).contains("github");
        assertThat(DETECTOR.find("q=sk%2dant%2Dapi03%2DMh3bNc7YdFs1QaRwT5uV")).contains("anthropic");
        // Basic credentials, every character escaped
        String b64 = Base64.getEncoder().encodeToString(("user:" + ANTHROPIC).getBytes(US_ASCII));
        assertThat(DETECTOR.find("auth=" + percent(b64, "all", true))).contains("anthropic");
    }

    @Test
    void nearMissesAndOtherTextAreNotSentinels() {
        assertThat(DETECTOR.find("")).isEmpty();
        assertThat(DETECTOR.find("the quick brown fox, sk-ant-api03-, ghp_ and %41%42")).isEmpty();
        assertThat(DETECTOR.find(ANTHROPIC.substring(0, ANTHROPIC.length() - 1))).isEmpty();
        assertThat(DETECTOR.find(ANTHROPIC.substring(1))).isEmpty();
        assertThat(DETECTOR.find(ANTHROPIC.replace('M', 'N'))).isEmpty();
        assertThat(DETECTOR.find(GITHUB.replace('Q', 'q'))).isEmpty();
        // another guest's sentinel, same vendor, same length
        assertThat(DETECTOR.find("sk-ant-api03-Zr8qLwP2vXk9TbQe7uRt")).isEmpty();
        // a broken escape in the middle keeps it from decoding to the sentinel
        assertThat(DETECTOR.find("sk-ant-api03-Mh3bNc7Y%6GFs1QaRwT5uV")).isEmpty();
        // percent-encoding is undone once only
        assertThat(DETECTOR.find(GITHUB.replace("Q", "%2551"))).isEmpty();
        assertThat(new SentinelDetector(Map.of()).find(ANTHROPIC)).isEmpty();
    }

    @Test
    void onlyTheReadableBytesAreSearchedAndTheyStayUnread() {
        ByteBuf direct = PooledByteBufAllocator.DEFAULT.directBuffer();
        try {
            direct.writeBytes((GITHUB + " then ").getBytes(US_ASCII));
            direct.readerIndex(GITHUB.length());
            assertThat(DETECTOR.find(direct)).isEmpty();
            direct.writeBytes(percent(ANTHROPIC, "all", false).getBytes(US_ASCII));
            int reader = direct.readerIndex();
            int writer = direct.writerIndex();
            assertThat(DETECTOR.find(direct)).contains("anthropic");
            assertThat(direct.readerIndex()).isEqualTo(reader);
            assertThat(direct.writerIndex()).isEqualTo(writer);
            assertThat(direct.toString(US_ASCII)).startsWith(" then %73%6b");
        } finally {
            direct.release();
        }
    }

    @Test
    void aSentinelTooShortToTellApartIsRefused() {
        assertThatThrownBy(() -> new SentinelDetector(Map.of("short", "sk-1234"))).isInstanceOf(
                IllegalArgumentException.class);
    }

    @Property(tries = 500)
    void aSentinelIsFoundInAnyFormAmongAnyText(@ForAll("sentinels") String sentinel,
            @ForAll("text") String before, @ForAll("text") String after, @ForAll @IntRange(max = 4) int how,
            @ForAll boolean upper) {
        SentinelDetector detector = new SentinelDetector(linked("it", sentinel, "other", GITHUB));
        String carried = switch (how) {
            case 0 -> before + sentinel + after;
            case 1 -> Base64.getEncoder().encodeToString((before + sentinel + after).getBytes(ISO_8859_1));
            case 2 -> Base64.getUrlEncoder().encodeToString((before + sentinel + after).getBytes(ISO_8859_1));
            case 3 -> before + percent(sentinel, "all", upper) + after;
            default -> before + percent(sentinel, "every other", upper) + after;
        };
        assertThat(detector.find(carried)).contains("it");
        assertThat(detector.find(Unpooled.wrappedBuffer(carried.getBytes(ISO_8859_1)))).contains("it");
    }

    @Property(tries = 500)
    void ordinaryTextHoldsNoSentinel(@ForAll("text") String text) {
        assertThat(DETECTOR.find(text)).isEmpty();
        assertThat(DETECTOR.find(Base64.getEncoder().encodeToString(text.getBytes(ISO_8859_1)))).isEmpty();
    }

    @Property(tries = 2000)
    void noBytesMakeItThrow(@ForAll @Size(max = 300) byte[] bytes, @ForAll boolean direct) {
        ByteBuf buf = direct ? PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length + 1) : Unpooled.buffer();
        try {
            buf.writeBytes(bytes);
            Optional<String> found = DETECTOR.find(buf);
            assertThat(found).isEmpty(); // random bytes do not hold a 33-character sentinel
            assertThat(buf.readerIndex()).isZero();
        } finally {
            buf.release();
        }
    }

    @Property(tries = 2000)
    void noStringMakesItThrow(@ForAll("hostile") String text) {
        assertThat(DETECTOR.find(text)).isEmpty();
    }

    @Provide
    static Arbitrary<String> sentinels() {
        return Arbitraries.strings().withChars(KeyScrubberTest.ALNUM).ofMinLength(8).ofMaxLength(60)
                .filter(s -> s.chars().distinct().count() >= 6);
    }

    @Provide
    static Arbitrary<String> text() {
        return Arbitraries.strings().withChars(" abcdefghijklmnopqrstuvwxyz.,:\"{}=&?/").ofMaxLength(80);
    }

    @Provide
    static Arbitrary<String> hostile() {
        return Arbitraries.oneOf(Arbitraries.strings().ofMaxLength(200),
                Arbitraries.strings().withChars("%0123456789abcdefABCDEFgG").ofMaxLength(200),
                Arbitraries.strings().withChars('%', '2', '5').ofMaxLength(50));
    }

    /** {@code s} with all its characters, or every other one, written as {@code %XX}. */
    static String percent(String s, String which, boolean upper) {
        HexFormat hex = upper ? HexFormat.of().withUpperCase() : HexFormat.of();
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            if (which.equals("all") || i % 2 == 0) {
                b.append('%').append(hex.toHexDigits((byte) s.charAt(i)));
            } else {
                b.append(s.charAt(i));
            }
        }
        return b.toString();
    }

    static Map<String, String> linked(String... pairs) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put(pairs[i], pairs[i + 1]);
        }
        return m;
    }
}
