package dev.kosa8.secrets;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TokenRequestsTest {
    static final String REAL = "1//0gRealRefresh-Token_value";
    static final String PLACEHOLDER = "a//0bPlaceHolder-Token_other";
    static final Map<String, String> SWAP = Map.of(PLACEHOLDER, REAL);

    static String swap(String body, String type) {
        var r = (TokenRequests.Swapped) TokenRequests.swap(body.getBytes(StandardCharsets.UTF_8), type, SWAP);
        return new String(r.body(), StandardCharsets.UTF_8);
    }

    @Test
    void aFormRefreshGetsTheRealTokenPercentEncodedAsTheGuestsWas() {
        String guest = "grant_type=refresh_token&refresh_token=a%2F%2F0bPlaceHolder-Token_other&client_id=x.apps";
        assertThat(swap(guest, "application/x-www-form-urlencoded; charset=utf-8"))
                .isEqualTo("grant_type=refresh_token&refresh_token=1%2F%2F0gRealRefresh-Token_value&client_id=x.apps");
        var r = (TokenRequests.Swapped) TokenRequests.swap(guest.getBytes(StandardCharsets.UTF_8),
                "application/x-www-form-urlencoded", SWAP);
        assertThat(r.fields()).containsExactly("refresh_token");
    }

    @Test
    void aJsonRefreshGetsTheRealToken() {
        String out = swap("{\"grant_type\": \"refresh_token\", \"refresh_token\": \"" + PLACEHOLDER
                + "\", \"client_id\": \"9d1c\"}", "application/json");
        assertThat(out).isEqualTo("{\"grant_type\":\"refresh_token\",\"refresh_token\":\"" + REAL
                + "\",\"client_id\":\"9d1c\"}");
    }

    @Test
    void onlyAWholeValueIsReplaced() {
        String inside = "{\"note\":\"my token is " + PLACEHOLDER + "\",\"nested\":{\"t\":\"" + PLACEHOLDER + "\"}}";
        assertThat(swap(inside, "application/json")).isEqualTo(inside);
        String form = "note=x" + PLACEHOLDER + "&" + PLACEHOLDER + "=1";
        assertThat(swap(form, "application/x-www-form-urlencoded")).isEqualTo(form);
        assertThat(swap("refresh_token=" + PLACEHOLDER, "text/plain")).isEqualTo("refresh_token=" + PLACEHOLDER);
    }

    @Test
    void malformedOrOversizedBodiesAreRefused() {
        assertThat(refused("{\"refresh_token\":", "application/json")).contains("says JSON but is not");
        assertThat(refused("[1,2]", "application/json")).contains("not an object");
        assertThat(refused("{\"a\":1,\"a\":2}", "application/json")).contains("says JSON but is not");
        assertThat(refused("refresh_token=%zz", "application/x-www-form-urlencoded")).contains("%-escape");
        assertThat(refused("a=" + "x".repeat(TokenRequests.MAX_BODY), "application/x-www-form-urlencoded"))
                .contains("over the " + TokenRequests.MAX_BODY);
    }

    static String refused(String body, String type) {
        var r = TokenRequests.swap(body.getBytes(StandardCharsets.UTF_8), type, SWAP);
        assertThat(r).isInstanceOf(TokenRequests.Refused.class);
        return ((TokenRequests.Refused) r).why();
    }
}
