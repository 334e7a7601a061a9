package dev.kosa8.secrets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class OAuthProvidersTest {
    @Test
    void kosa8sTableNamesEachAgentsTokenEndpointAndApiHosts() {
        OAuthProviders p = OAuthProviders.builtIn();
        assertThat(p.all()).extracting(OAuthProvider::name).containsExactly("anthropic", "openai", "google");
        assertThat(p.tokenEndpoint("console.anthropic.com", 443, "/v1/oauth/token")).map(OAuthProvider::name)
                .contains("anthropic");
        assertThat(p.tokenEndpoint("auth.openai.com", 443, "/oauth/token?x=1")).map(OAuthProvider::name)
                .contains("openai");
        assertThat(p.tokenEndpoint("oauth2.googleapis.com", 443, "/token")).map(OAuthProvider::name)
                .contains("google");
        assertThat(p.tokenEndpoint("oauth2.googleapis.com", 8443, "/token")).isEmpty();
        assertThat(p.tokenEndpoint("oauth2.googleapis.com", 443, "/tokeninfo")).isEmpty();
        assertThat(p.isTokenHost("auth.openai.com", 443)).isTrue();
        assertThat(p.isTokenHost("chatgpt.com", 443)).isFalse();
        assertThat(p.all().get(1).apiHosts()).contains("chatgpt.com", "api.openai.com");
    }

    @Test
    void aBadEntryIsRefusedNamingIt() {
        assertThatThrownBy(() -> new OAuthProvider("Bad", List.of("a.test/t"), List.of()))
                .hasMessageContaining("'Bad'");
        assertThatThrownBy(() -> new OAuthProvider("p", List.of("a.test"), List.of()))
                .hasMessageContaining("'a.test' is not host/path");
        assertThatThrownBy(() -> new OAuthProvider("p", List.of("a.test/t"), List.of("1.2.3.4")))
                .hasMessageContaining("'1.2.3.4'");
    }
}
