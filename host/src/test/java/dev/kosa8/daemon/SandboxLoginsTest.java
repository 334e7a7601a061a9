package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.host.HostPaths;
import dev.kosa8.secrets.OAuthProviders;
import dev.kosa8.secrets.SecretStore;
import dev.kosa8.secrets.TokenResponses;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SandboxLoginsTest {
    static final String ID = "0123456789ab";

    @TempDir
    Path home;

    @Test
    void aLoginsTokensAreKeptInTheStoreUnderTheSandboxsNameAndLeaveWithIt() throws Exception {
        SandboxLayout layout = new SandboxLayout(new HostPaths(home.resolve("data"), home.resolve("cache"),
                home.resolve("run")));
        Files.createDirectories(layout.directory(ID));
        SecretStore store = new SecretStore(Files.createDirectories(home.resolve("config")),
                Map.of("KOSA8_SECRET_STORE", "file"));
        List<String> log = new ArrayList<>();
        OAuthProviders providers = OAuthProviders.builtIn();
        SandboxLogins logins = new SandboxLogins(() -> store, layout, log::add, providers);
        var openai = providers.all().get(1);
        var first = new TokenResponses.Token("refresh_token", "real-refresh-0001", "fake-refresh-0001");
        var second = new TokenResponses.Token("refresh_token", "real-refresh-0002", "fake-refresh-0002");
        var access = new TokenResponses.Token("access_token", "real-access-00001", "fake-access-00001");
        logins.keeper(ID).kept(openai, first);
        logins.keeper(ID).kept(openai, second);
        logins.keeper(ID).kept(openai, access);
        logins.settle();

        assertThat(store.value("oauth_" + ID + "_openai_refresh")).isEqualTo("real-refresh-0002");
        assertThat(store.spec("oauth_" + ID + "_openai_access").orElseThrow().host()).isEqualTo("chatgpt.com");
        assertThat(store.spec("oauth_" + ID + "_openai_refresh").orElseThrow().host()).isEqualTo("auth.openai.com");
        String file = Files.readString(layout.logins(ID));
        assertThat(file).contains("fake-refresh-0002", "fake-access-00001").doesNotContain("real-");
        assertThat(logins.kept(ID).get("openai")).containsExactlyInAnyOrder(second, access);

        logins.forget(ID);
        logins.settle();
        assertThat(store.list()).noneMatch(s -> s.name().startsWith("oauth_" + ID));
        assertThat(log).isEmpty();
    }
}
