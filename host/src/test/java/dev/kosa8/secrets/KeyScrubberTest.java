package dev.kosa8.secrets;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.ResourceLeakDetector;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The scrubber against a plain model of it (replace the leftmost form, the longest at that
 * position, and start again from the beginning until no form is left), over bodies cut into chunks
 * anywhere, and the ownership of every buffer it is handed.
 */
class KeyScrubberTest {

    static final String KEY = "sk-ant-api03-Zr8qLwP2vXk9TbQe";
    static final String SENTINEL = "sk-ant-api03-Mh3bNc7YdFs1QaRw";
    static final KeyScrubber ONE = KeyScrubber.of(Map.of(KEY, SENTINEL));


    @BeforeAll
    static void paranoid() {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    }

    // ---- the examples a reader checks first

    @Test
    void anEchoedKeyComesBackAsTheSentinelAndTheBodyKeepsItsLength() {
        String body = "{\"error\":\"invalid x-api-key: " + KEY + "\"}";
        assertThat(scrubInChunks(ONE, body.getBytes(US_ASCII), 1000))
                .isEqualTo("{\"error\":\"invalid x-api-key: " + SENTINEL + "\"}");
    }

    @Test
    void aKeyInsideBasicCredentialsOrBase64UrlIsRemovedFromHeadersAndBodies() {
        String basic = "Basic " + Base64.getEncoder().encodeToString(("user:" + KEY).getBytes(US_ASCII));
        String scrubbed = ONE.scrub(basic);
        assertThat(scrubbed).hasSameSizeAs(basic).isNotEqualTo(basic);
        assertThat(new String(Base64.getDecoder().decode(scrubbed.substring(6)), US_ASCII))
                .startsWith("user:sk-ant-api03-Mh3bNc7YdFs1QaR").doesNotContain(KEY);

        String url = Base64.getUrlEncoder().encodeToString(("{\"k\":\"" + KEY + "\"}").getBytes(US_ASCII));
        String out = scrubInChunks(ONE, ("token=" + url + "&x=1").getBytes(US_ASCII), 7);
        assertThat(new String(Base64.getUrlDecoder().decode(out.substring(6, out.length() - 4)), US_ASCII))
                .doesNotContain(KEY).contains("Mh3bNc7YdFs1Q");
    }

    @Test
    void aHeaderWithoutKeysIsReturnedAsItIsAndCharactersBeyondAsciiSurvive() {
        String plain = "text/html; charset=utf-8";
        assertThat(ONE.scrub(plain)).isSameAs(plain);
        assertThat(ONE.scrub("ключ " + KEY + " 鍵")).isEqualTo("ключ " + SENTINEL + " 鍵");
        assertThat(ONE.scrub("")).isEmpty();
    }

    @Test
    void aKeySplitAtAnyPointAcrossTwoChunksIsStillFound() {
        byte[] body = ("0123456789 prefix " + KEY + " suffix").getBytes(US_ASCII);
        String expected = "0123456789 prefix " + SENTINEL + " suffix";
        for (int cut = 0; cut <= body.length; cut++) {
            assertThat(scrub(ONE, body, cut, body.length - cut)).as("cut at %d", cut).isEqualTo(expected);
        }
        assertThat(scrubInChunks(ONE, body, 1)).isEqualTo(expected);
    }

    @Test
    void atOnePositionTheLongerKeyWins() {
        KeyScrubber two = KeyScrubber.of(linked("sk-abcdefgh", "sk-ZZZZZZZZ", "sk-abcdefghijkl", "sk-YYYYYYYYYYYY"));
        assertThat(scrubInChunks(two, "x sk-abcdefghijkl y sk-abcdefghij z".getBytes(US_ASCII), 3))
                .isEqualTo("x sk-YYYYYYYYYYYY y sk-ZZZZZZZZij z");
        // the longer key's tail is held back until it is decided, then the shorter one wins
        assertThat(scrub(two, "sk-abcdefghijk".getBytes(US_ASCII), 14)).isEqualTo("sk-ZZZZZZZZijk");
    }

    @Test
    void aReplacementThatJoinsTheTextBeforeItIntoAKeyIsReplacedInTurn() {
        // found by the property below: the sentinel's base64 form begins with 'Q', the key's last
        // character, and the text before the key's base64 form is the rest of the key
        String key = "DAAAAAAABCEQ";
        String sentinel = "AbCdEfGhIjKl";
        String b64Key = Base64.getEncoder().encodeToString(key.getBytes(US_ASCII));
        String b64Sentinel = Base64.getEncoder().encodeToString(sentinel.getBytes(US_ASCII));
        assertThat(b64Sentinel).startsWith("Q");
        KeyScrubber scrubber = KeyScrubber.of(Map.of(key, sentinel));
        byte[] body = (key.substring(0, 11) + b64Key).getBytes(US_ASCII);

        String expected = sentinel + b64Sentinel.substring(1);
        assertThat(scrubber.scrub(new String(body, US_ASCII))).isEqualTo(expected);
        for (int cut = 0; cut <= body.length; cut++) {
            assertThat(scrub(scrubber, body, cut, body.length - cut)).as("cut at %d", cut).isEqualTo(expected);
        }
        assertThat(scrubInChunks(scrubber, body, 1)).isEqualTo(expected);
    }

    @Test
    void aChainOfReplacementsReachingBytesAlreadySentCutsTheResponseOff() {
        // replacing A makes B with the text before it, replacing B makes C; C began in bytes already sent
        KeyScrubber chain = KeyScrubber.of(linked("a1b2c3d4", "Zbbbbbbb", "yyyyyyyZ", "Wccccccc",
                "xxxxxxxW", "Vddddddd"));
        byte[] body = "xxxxxxxyyyyyyya1b2c3d4".getBytes(US_ASCII);
        assertThat(scrub(chain, body, body.length)).isEqualTo("Vdddddddcccccccbbbbbbb");
        assertThat(chain.scrub(new String(body, US_ASCII))).isEqualTo("Vdddddddcccccccbbbbbbb");

        KeyScrubber.Session s = chain.session();
        ByteBuf first = s.feed(Unpooled.copiedBuffer(body, 0, 17)); // up to "a1b": A is not yet decided
        assertThat(first.toString(US_ASCII)).isEqualTo("xxxxx");
        first.release();
        ByteBuf rest = Unpooled.copiedBuffer(body, 17, body.length - 17);
        assertThatThrownBy(() -> s.feed(rest)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already sent");
        assertThat(rest.refCnt()).isZero();
    }

    @Test
    void withoutKeysTheChunkIsHandedOnUntouched() {
        KeyScrubber none = new KeyScrubber(List.of());
        ByteBuf in = Unpooled.copiedBuffer("anything at all", US_ASCII);
        KeyScrubber.Session s = none.session();
        assertThat(s.feed(in)).isSameAs(in);
        assertThat(s.finish().readableBytes()).isZero();
        assertThat(none.scrub("x")).isEqualTo("x");
        assertThat(none.maxFormLength()).isZero();
        in.release();
    }

    @Test
    void aChunkWithNothingToHoldIsHandedOnItselfAndOnlyTheTailIsKept() {
        ByteBuf in = PooledByteBufAllocator.DEFAULT.directBuffer();
        in.writeBytes(new byte[1000]);
        KeyScrubber.Session s = ONE.session();
        ByteBuf out = s.feed(in);
        assertThat(out).isSameAs(in);
        assertThat(out.readableBytes()).isGreaterThan(1000 - ONE.maxFormLength());
        int rest = s.finish().readableBytes();
        assertThat(out.readableBytes() + rest).isEqualTo(1000);
        out.release();
        assertThat(in.refCnt()).isZero();
    }

    @Test
    void aReadOnlyChunkIsCopiedRatherThanWrittenInto() {
        byte[] bytes = ("say " + KEY + " again, and again and again").getBytes(US_ASCII);
        ByteBuf original = Unpooled.wrappedBuffer(bytes.clone());
        KeyScrubber.Session s = ONE.session();
        ByteBuf out = s.feed(original.retain().asReadOnly()); // the view shares the count, which feed drops
        ByteBuf rest = s.finish();
        assertThat(out.toString(US_ASCII) + rest.toString(US_ASCII))
                .isEqualTo("say " + SENTINEL + " again, and again and again");
        assertThat(original.refCnt()).isOne();
        assertThat(original.toString(US_ASCII)).contains(KEY);
        out.release();
        rest.release();
        original.release();
    }

    @Test
    void aFinishedSessionTakesNothingMoreAndReleasesWhatItRefuses() {
        KeyScrubber.Session s = ONE.session();
        s.finish().release();
        ByteBuf late = Unpooled.buffer().writeByte('x');
        assertThatThrownBy(() -> s.feed(late)).isInstanceOf(IllegalStateException.class);
        assertThat(late.refCnt()).isZero();
        assertThatThrownBy(s::finish).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aFormInBothAlphabetsIsReplacedByTheStandardForm() {
        // '?' (0x3F) encodes to runs with '/' in base64 and '_' in base64url: distinct forms.
        // 'A' never does: its base64 and base64url forms are one text, replaced by the base64 form.
        KeyForms forms = KeyForms.of("AAAAAAAAAAAA", "????????????");
        KeyScrubber s = new KeyScrubber(List.of(forms));
        assertThat(s.scrub(forms.forms().get(4).text())).isEqualTo(forms.forms().get(1).counterpart());
        assertThat(forms.forms().get(1).counterpart()).isEqualTo("Pz8/Pz8/Pz8/Pz8/");
    }

    @Test
    void aSentinelHoldingARealKeyIsRefused() {
        assertThatThrownBy(() -> KeyScrubber.of(linked("sk-aaaaaaaaaaaaaaaa", "sk-bx-XXXXXXXXbbbbb",
                "x-XXXXXXXX", "x-yyyyyyyy"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sentinel holds a form of a real key");
    }

    // ---- the property: streaming equals one pass equals the model, and no form survives

    /** A body with the keys placed in it, raw, encoded at any offset, or cut short. */
    record Case(List<KeyForms> keys, byte[] body, List<Integer> chunks, boolean direct) {
        @Override
        public String toString() {
            return "Case[keys " + keys.stream().map(k -> k.forms().getFirst())
                    .map(f -> f.text() + " -> " + f.counterpart()).toList() + ", body " + new String(body, ISO_8859_1)
                    + ", chunks " + chunks
                    + (direct ? ", direct" : ", heap") + "]";
        }
    }

    static final String ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

    @Provide
    static Arbitrary<Case> cases() {
        Arbitrary<String> vendor = Arbitraries.of("sk-", "sk-ant-api03-", "ghp_", "");
        Arbitrary<KeyForms> key = Combinators.combine(vendor, Arbitraries.integers().between(8, 48)).flatAs((v, n) -> {
            // like the random parts of real keys and sentinels: not "AAAA…", which could hold another key
            Arbitrary<String> body = Arbitraries.strings().withChars(ALNUM).ofLength(n)
                    .filter(s -> s.chars().distinct().count() >= 6);
            return Combinators.combine(body, body).filter((a, b) -> !a.equals(b))
                    .as((a, b) -> KeyForms.of(v + a, v + b));
        });
        return key.list().ofMinSize(1).ofMaxSize(3).flatMap(keys -> {
            Arbitrary<byte[]> segment = Arbitraries.oneOf(
                    Arbitraries.bytes().array(byte[].class).ofMaxSize(60),
                    Arbitraries.strings().withChars(ALNUM + "+/-_=").ofMaxLength(60).map(s -> s.getBytes(US_ASCII)),
                    Arbitraries.of(keys).map(k -> k.forms().getFirst().text().getBytes(US_ASCII)),
                    Combinators.combine(Arbitraries.of(keys), Arbitraries.integers().between(0, 6).flatMap(
                            i -> Arbitraries.bytes().array(byte[].class).ofSize(i)), Arbitraries.bytes().array(byte[].class)
                            .ofMaxSize(5), Arbitraries.of(true, false)).as(KeyScrubberTest::encoded),
                    Combinators.combine(Arbitraries.of(keys), Arbitraries.integers().between(0, 6),
                            Arbitraries.doubles().between(0, 1)).as((k, f, cut) -> {
                                String text = k.forms().get(f).text();
                                return text.substring(0, (int) (cut * text.length())).getBytes(US_ASCII);
                            }));
            Arbitrary<byte[]> body = segment.list().ofMaxSize(12).map(KeyScrubberTest::join);
            Arbitrary<List<Integer>> chunks = Arbitraries.integers().between(1, 90).list().ofMinSize(1).ofMaxSize(8);
            return Combinators.combine(body, chunks, Arbitraries.of(true, false))
                    .as((b, c, d) -> new Case(keys, b, c, d));
        });
    }

    static byte[] encoded(KeyForms key, byte[] before, byte[] after, boolean url) {
        byte[] data = join(List.of(before, key.forms().getFirst().text().getBytes(US_ASCII), after));
        return (url ? Base64.getUrlEncoder() : Base64.getEncoder()).encode(data);
    }

    @Property(tries = 1000)
    void inAnyChunksTheOutputIsTheOnePassOutputIsTheModelsAndHoldsNoForm(@ForAll("cases") Case c) {
        KeyScrubber scrubber = new KeyScrubber(c.keys());
        byte[] expected = model(c.keys(), c.body());

        byte[] streamed = stream(scrubber, c.body(), c.chunks(), c.direct());
        byte[] onePass = stream(scrubber, c.body(), List.of(Math.max(1, c.body().length)), c.direct());

        assertThat(streamed).hasSize(c.body().length);
        assertThat(onePass).isEqualTo(expected);
        assertThat(streamed).isEqualTo(expected);
        for (KeyForms k : c.keys()) {
            for (KeyForms.Form f : k.forms()) {
                assertThat(KeyFormsTest.indexOf(streamed, f.text().getBytes(US_ASCII))).as("%s left", f).isEqualTo(-1);
            }
        }
        String header = new String(c.body(), ISO_8859_1);
        assertThat(scrubber.scrub(header)).isEqualTo(new String(expected, ISO_8859_1));
    }

    @Property(tries = 300)
    void aSessionNeverHoldsBackMoreThanTwoFormsLessTwoBytes(@ForAll @Size(min = 1, max = 400) byte[] body,
            @ForAll @IntRange(min = 1, max = 50) int chunk) {
        // worst case for holding back: the body is prefixes of the key's forms, repeated
        byte[] prefixes = join(List.of(KEY.substring(0, 20).getBytes(US_ASCII), body,
                KEY.substring(0, 28).getBytes(US_ASCII)));
        assertThat(stream(ONE, prefixes, List.of(chunk), true)).isEqualTo(model(List.of(KeyForms.of(KEY, SENTINEL)), prefixes));
    }

    /**
     * Feeds {@code body} in chunks of the given sizes (cycled), checks after each feed that no
     * more than {@code 2 * (maxFormLength() - 1)} bytes are held back (a form's start that may still
     * be completed, and before it what its replacement could join with), releases every output, and then
     * checks that every input buffer was released too.
     */
    static byte[] stream(KeyScrubber scrubber, byte[] body, List<Integer> sizes, boolean direct) {
        KeyScrubber.Session session = scrubber.session();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        List<ByteBuf> inputs = new ArrayList<>();
        int at = 0;
        for (int i = 0; at < body.length; i++) {
            int n = Math.min(sizes.get(i % sizes.size()), body.length - at);
            ByteBuf in = direct ? PooledByteBufAllocator.DEFAULT.directBuffer(n + 16) : Unpooled.buffer(n + 16);
            in.writeBytes(new byte[] {'!', '!'}).readerIndex(2); // a chunk need not start at index 0
            in.writeBytes(body, at, n);
            inputs.add(in);
            drain(session.feed(in), out);
            at += n;
            assertThat(at - out.size()).as("held back")
                    .isLessThanOrEqualTo(2 * Math.max(0, scrubber.maxFormLength() - 1));
        }
        drain(session.finish(), out);
        assertThat(inputs).allSatisfy(b -> assertThat(b.refCnt()).as("input released").isZero());
        return out.toByteArray();
    }

    static void drain(ByteBuf b, ByteArrayOutputStream out) {
        try {
            out.writeBytes(ByteBufUtil.getBytes(b));
        } finally {
            b.release();
        }
        if (b != Unpooled.EMPTY_BUFFER) { // which counts no references
            assertThat(b.refCnt()).as("output released").isZero();
        }
    }

    /**
     * The model: the leftmost form, the longest at that position (the first of equal texts), is
     * replaced, and the text searched again from its start, until no form is left.
     */
    static byte[] model(List<KeyForms> keys, byte[] body) {
        List<byte[]> texts = new ArrayList<>();
        List<byte[]> swaps = new ArrayList<>();
        for (KeyForms k : keys) {
            for (KeyForms.Form f : k.forms()) {
                byte[] t = f.text().getBytes(US_ASCII);
                if (texts.stream().noneMatch(x -> Arrays.equals(x, t))) {
                    texts.add(t);
                    swaps.add(f.counterpart().getBytes(US_ASCII));
                }
            }
        }
        byte[] out = body.clone();
        int i = 0;
        while (i < out.length) {
            int best = -1;
            for (int p = 0; p < texts.size(); p++) {
                byte[] t = texts.get(p);
                if (i + t.length <= out.length && Arrays.equals(out, i, i + t.length, t, 0, t.length)
                        && (best < 0 || t.length > texts.get(best).length)) {
                    best = p;
                }
            }
            if (best < 0) {
                i++;
            } else {
                System.arraycopy(swaps.get(best), 0, out, i, swaps.get(best).length);
                i = 0;
            }
        }
        return out;
    }

    static String scrub(KeyScrubber scrubber, byte[] body, int... cuts) {
        List<Integer> sizes = new ArrayList<>();
        for (int c : cuts) {
            sizes.add(Math.max(c, 1));
        }
        return new String(stream(scrubber, body, sizes, true), ISO_8859_1);
    }

    static String scrubInChunks(KeyScrubber scrubber, byte[] body, int size) {
        return new String(stream(scrubber, body, List.of(size), false), ISO_8859_1);
    }

    static byte[] join(List<byte[]> parts) {
        return KeyFormsTest.concat(parts.toArray(byte[][]::new));
    }

    static Map<String, String> linked(String... pairs) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put(pairs[i], pairs[i + 1]);
        }
        return m;
    }
}
