package dev.kosa8.secrets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.CharRange;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

class TokenPlaceholdersTest {
    static final Random RNG = new Random(36);

    static String jwt(String payloadJson, String signature) {
        Base64.Encoder b = Base64.getUrlEncoder().withoutPadding();
        return b.encodeToString("{\"alg\":\"RS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + b.encodeToString(payloadJson.getBytes(StandardCharsets.UTF_8)) + "." + signature;
    }

    @Test
    void aJwtKeepsItsClaimsAndGetsAnotherSignatureOfTheSameLength() {
        String token = jwt("{\"email\":\"a@example.com\",\"chatgpt_account_id\":\"acc-1\"}",
                "SIGsig-_0123456789abcdefSIGsig-_0123456789abcdef");
        String p = TokenPlaceholders.mint(token, RNG);
        int sig = token.lastIndexOf('.') + 1;
        assertThat(p).hasSameSizeAs(token).isNotEqualTo(token).startsWith(token.substring(0, sig));
        assertThat(p.substring(sig)).matches("[A-Za-z0-9_-]+").isNotEqualTo(token.substring(sig));
    }

    @Test
    void otherTokensKeepTheirPrefixAndPunctuationAndNothingElse() {
        String anthropic = "sk-ant-oat01-" + "Ab3_Cd4-Ef5".repeat(8);
        String p = TokenPlaceholders.mint(anthropic, RNG);
        assertThat(p).hasSameSizeAs(anthropic).startsWith("sk-ant-oat01-").isNotEqualTo(anthropic);
        for (int i = 0; i < p.length(); i++) {
            char c = anthropic.charAt(i);
            if (!Character.isLetterOrDigit(c)) {
                assertThat(p.charAt(i)).isEqualTo(c);
            } else {
                assertThat(Character.isLetterOrDigit(p.charAt(i))).isTrue();
            }
        }
        String google = "ya29.a0AfB_byC" + "x".repeat(100);
        assertThat(TokenPlaceholders.mint(google, RNG)).hasSameSizeAs(google).matches("[A-Za-z0-9]{4}\\.[A-Za-z0-9]{5}"
                + "_[A-Za-z0-9]+");
        String refresh = "1//0gLx-abcdefghijklmnop";
        assertThat(TokenPlaceholders.mint(refresh, RNG)).matches("[A-Za-z0-9]//[A-Za-z0-9]{4}-[A-Za-z0-9]{16}");
    }

    @Test
    void aTokenWithNothingToReplaceIsRefused() {
        assertThatThrownBy(() -> TokenPlaceholders.mint("--------.--", RNG)).isInstanceOf(
                IllegalArgumentException.class);
        assertThatThrownBy(() -> TokenPlaceholders.mint(jwt("{}", ""), RNG))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Property(tries = 300)
    void aPlaceholderHasTheLengthAndNoneOfTheSecretCharactersOfItsToken(
            @ForAll @StringLength(min = 8, max = 200) @CharRange(from = '!', to = '~') String token) {
        String p;
        try {
            p = TokenPlaceholders.mint(token, RNG);
        } catch (IllegalArgumentException e) {
            assertThat(token.substring(Sentinels.prefixLength(token))).doesNotContainPattern("[A-Za-z0-9]");
            return;
        }
        assertThat(p).hasSameSizeAs(token).isNotEqualTo(token);
        assertThat(p).matches("[!-~]+");
    }
}
