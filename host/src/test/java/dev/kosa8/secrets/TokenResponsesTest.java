package dev.kosa8.secrets;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

class TokenResponsesTest {
    static final Random RNG = new Random(5);
    static final String ACCESS = "sk-ant-oat01-" + "RealAccessToken0123456789".repeat(3);
    static final String REFRESH = "sk-ant-ort01-" + "RealRefreshToken987654321".repeat(3);

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aTokenResponsesTokensBecomePlaceholdersAndEverythingElseStays() {
        String body = "{\"token_type\":\"Bearer\",\"access_token\":\"" + ACCESS + "\",\"expires_in\":28800,"
                + "\"refresh_token\":\"" + REFRESH + "\",\"scope\":\"user:inference\"}";
        var r = (TokenResponses.Rewritten) TokenResponses.rewrite(bytes(body), true, RNG);
        String out = new String(r.body(), StandardCharsets.UTF_8);
        assertThat(out).hasSameSizeAs(body).doesNotContain(ACCESS).doesNotContain(REFRESH)
                .contains("\"expires_in\":28800").contains("\"scope\":\"user:inference\"");
        assertThat(r.tokens()).extracting(TokenResponses.Token::field).containsExactly("access_token", "refresh_token");
        for (TokenResponses.Token t : r.tokens()) {
            assertThat(out).contains("\"" + t.placeholder() + "\"");
            assertThat(body).contains(t.real());
            assertThat(t.toString()).doesNotContain(t.real()).doesNotContain(t.placeholder());
        }
    }

    @Test
    void theSameTokenInTwoFieldsGetsOnePlaceholder() {
        String body = "{\"access_token\":\"" + ACCESS + "\",\"id_token\":\"" + ACCESS + "\"}";
        var r = (TokenResponses.Rewritten) TokenResponses.rewrite(bytes(body), true, RNG);
        assertThat(r.tokens().get(0).placeholder()).isEqualTo(r.tokens().get(1).placeholder());
    }

    @Test
    void anAnswerWithoutTokensPassesAsItIs() {
        byte[] err = bytes("{\"error\":\"invalid_grant\",\"error_description\":\"refresh token expired\"}");
        assertThat(((TokenResponses.Rewritten) TokenResponses.rewrite(err, false, RNG)).body()).isEqualTo(err);
        byte[] page = bytes("<html>502 Bad Gateway</html>");
        assertThat(((TokenResponses.Rewritten) TokenResponses.rewrite(page, false, RNG)).tokens()).isEmpty();
    }

    @Test
    void whatCannotBeReadForCertainIsRefused() {
        assertThat(refused("access_token=" + ACCESS + "&token_type=bearer", true)).contains("not a JSON object");
        assertThat(refused("<html>access_token</html>", false)).contains("not a JSON object");
        assertThat(refused("[\"" + ACCESS + "\"]", true)).contains("not a JSON object");
        assertThat(refused("{\"access_token\":{\"value\":\"" + ACCESS + "\"}}", true)).contains("not a JSON string");
        assertThat(refused("{\"access_token\":\"" + ACCESS.replace("-", "\\u002d") + "\"}", true))
                .contains("JSON escapes");
        assertThat(refused("{\"access_token\":\"short\"}", true)).contains("has 5 characters");
        assertThat(refused("{\"access_token\":\"with a space in it\"}", true)).contains("printable ASCII");
        assertThat(refused("{\"access_token\":\"" + ACCESS + "\",\"access_token\":\"" + REFRESH + "\"}", true))
                .contains("not a JSON object");
        assertThat(refused("{\"access_token\":\"" + ACCESS + "\"", true)).contains("not a JSON object");
        String big = "{\"access_token\":\"" + ACCESS + "\",\"pad\":\"" + "x".repeat(TokenResponses.MAX_BODY) + "\"}";
        assertThat(refused(big, true)).contains("over the " + TokenResponses.MAX_BODY);
    }

    static String refused(String body, boolean success) {
        TokenResponses.Result r = TokenResponses.rewrite(bytes(body), success, RNG);
        assertThat(r).isInstanceOf(TokenResponses.Refused.class);
        String why = ((TokenResponses.Refused) r).why();
        assertThat(why).doesNotContain(ACCESS).doesNotContain(REFRESH);
        return why;
    }
}
