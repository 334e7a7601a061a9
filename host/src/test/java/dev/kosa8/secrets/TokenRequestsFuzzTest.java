package dev.kosa8.secrets;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The body of a request to a token endpoint is the guest's: whatever it sends, the rewriter answers within its
 * bound, never throws, and puts a real token in only where the guest's body held its placeholder as a whole value.
 */
class TokenRequestsFuzzTest {
    static final String PLACEHOLDER = "sk-ant-ort01-PLACEholder0123456789";
    static final String REAL = "sk-ant-ort01-REALrefresh9876543210";
    static final Map<String, String> SWAP = Map.of(PLACEHOLDER, REAL);

    @Provide
    Arbitrary<String> bodies() {
        Arbitrary<String> pieces = Arbitraries.oneOf(
                Arbitraries.of("{", "}", "[", "]", "\"", ":", ",", "=", "&", "%", "%2F", "%zz", "\\", "\\u0041",
                        "refresh_token", "grant_type", " ", "\n", "null", "1e999", "\u00e9", "\uD83D"),
                Arbitraries.of(PLACEHOLDER, "\"" + PLACEHOLDER + "\"", "refresh_token=" + PLACEHOLDER,
                        "{\"refresh_token\":\"" + PLACEHOLDER + "\"}", PLACEHOLDER.substring(3)),
                Arbitraries.strings().ofMaxLength(12));
        return pieces.list().ofMaxSize(40).map(l -> String.join("", l));
    }

    @Provide
    Arbitrary<String> types() {
        return Arbitraries.of(null, "application/json", "application/x-www-form-urlencoded",
                "Application/JSON; charset=utf-8", "application/merge-patch+json", "text/plain", "",
                "application/x-www-form-urlencoded;;;");
    }

    @Property(tries = 3000)
    void anyGuestBodyIsSwappedOnlyWhereItHeldThePlaceholder(@ForAll("bodies") String body,
                                                            @ForAll("types") String type) {
        byte[] in = body.getBytes(StandardCharsets.UTF_8);
        TokenRequests.Result r = TokenRequests.swap(in, type, SWAP);
        switch (r) {
            case TokenRequests.Refused x -> assertThat(x.why()).doesNotContain(REAL).isNotBlank();
            case TokenRequests.Swapped x -> {
                String out = new String(x.body(), StandardCharsets.UTF_8);
                if (x.fields().isEmpty()) {
                    assertThat(x.body()).isEqualTo(in);
                } else {
                    assertThat(body).contains(PLACEHOLDER.substring(13));
                    assertThat(out).contains(REAL);
                    assertThat(x.body().length).isLessThanOrEqualTo(in.length + x.fields().size() * 3 * REAL.length());
                }
            }
        }
    }

    @Property(tries = 500)
    void aBodyOverTheBoundIsRefusedWhateverItIs(@ForAll("types") String type) {
        byte[] in = new byte[TokenRequests.MAX_BODY + 1];
        java.util.Arrays.fill(in, (byte) 'a');
        assertThat(TokenRequests.swap(in, type, SWAP)).isInstanceOf(TokenRequests.Refused.class);
    }

    @Property(tries = 2000)
    void aRefreshFormWithAnyOtherFieldsGetsTheRealToken(@ForAll("fields") String before,
                                                         @ForAll("fields") String after) {
        String body = before + "&refresh_token=" + PLACEHOLDER + "&" + after;
        TokenRequests.Result r = TokenRequests.swap(body.getBytes(StandardCharsets.UTF_8),
                "application/x-www-form-urlencoded", SWAP);
        if (r instanceof TokenRequests.Swapped x) {
            assertThat(new String(x.body(), StandardCharsets.UTF_8)).contains("refresh_token=" + REAL)
                    .doesNotContain("refresh_token=" + PLACEHOLDER);
        } else {
            assertThat(((TokenRequests.Refused) r).why()).contains("%-escape");
            assertThat(before + after).contains("%");
        }
    }

    @Provide
    Arbitrary<String> fields() {
        return Combinators.combine(Arbitraries.strings().withCharRange('!', '~').ofMaxLength(10),
                Arbitraries.strings().withCharRange('!', '~').ofMaxLength(10))
                .as((k, v) -> k.replace("&", "") + "=" + v.replace("&", ""));
    }
}
