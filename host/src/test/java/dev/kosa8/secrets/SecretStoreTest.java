package dev.kosa8.secrets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SecretStoreTest {
    private static final Instant T = Instant.parse("2026-01-02T03:04:05Z");
    private static final Map<String, String> FILE_ONLY = Map.of("KOSA8_SECRET_STORE", "file");

    @TempDir
    Path dir;

    private static SecretSpec spec(String name, String host) {
        return SecretSpec.of(name, host, null, null, T, "file");
    }

    @Test
    void setsListsReadsAndRemovesSecrets() throws Exception {
        SecretStore store = new SecretStore(dir, FILE_ONLY);
        assertThat(store.list()).isEmpty();
        assertThat(store.defaultStore()).isEqualTo("file");

        store.set(spec("OPENAI_API_KEY", "api.openai.com"), "sk-proj-abcdefgh");
        store.set(SecretSpec.of("ANTHROPIC_API_KEY", "api.anthropic.com", "x-api-key: {}", null, T, "file"),
                "sk-ant-api03-xyz12345");

        assertThat(store.list()).extracting(SecretSpec::name).containsExactly("ANTHROPIC_API_KEY", "OPENAI_API_KEY");
        assertThat(store.spec("ANTHROPIC_API_KEY")).get().extracting(SecretSpec::header).isEqualTo("x-api-key: {}");
        assertThat(store.value("OPENAI_API_KEY")).isEqualTo("sk-proj-abcdefgh");
        // another store on the same directory, as another CLI process or the daemon, sees the same
        assertThat(new SecretStore(dir, FILE_ONLY).value("ANTHROPIC_API_KEY")).isEqualTo("sk-ant-api03-xyz12345");

        store.remove("OPENAI_API_KEY");
        assertThat(store.list()).extracting(SecretSpec::name).containsExactly("ANTHROPIC_API_KEY");
        assertThat(new FileSecretValues(dir).get("OPENAI_API_KEY")).isEmpty();
        assertThatThrownBy(() -> store.value("OPENAI_API_KEY")).isInstanceOf(KosaException.class)
                .hasMessageContaining("no secret named OPENAI_API_KEY")
                .satisfies(e -> assertThat(((KosaException) e).suggestion())
                        .isEqualTo("set it with `kosa8 secret set OPENAI_API_KEY --host HOST`"));
        assertThatThrownBy(() -> store.remove("OPENAI_API_KEY")).hasMessageContaining("no secret named");
    }

    @Test
    void replacingASecretKeepsOneEntryWithTheNewSpecAndValue() {
        SecretStore store = new SecretStore(dir, FILE_ONLY);
        store.set(spec("K", "a.example"), "first-value");
        store.set(SecretSpec.of("K", "b.example:8443", null, "OTHER", T.plusSeconds(5), "file"), "second-value");
        assertThat(store.list()).singleElement().satisfies(s -> {
            assertThat(s.authority()).isEqualTo("b.example:8443");
            assertThat(s.env()).isEqualTo("OTHER");
            assertThat(s.setAt()).isEqualTo(T.plusSeconds(5));
        });
        assertThat(store.value("K")).isEqualTo("second-value");
    }

    @Test
    void theCatalogHoldsNoValuesAndBothFilesAre0600() throws Exception {
        SecretStore store = new SecretStore(dir, FILE_ONLY);
        store.set(spec("K", "a.example"), "sk-very-secret-1");
        String catalog = Files.readString(dir.resolve(SecretCatalog.FILE));
        assertThat(catalog).contains("\"a.example\"").contains("\"2026-01-02T03:04:05Z\"")
                .doesNotContain("sk-very-secret-1");
        for (String f : List.of(SecretCatalog.FILE, FileSecretValues.FILE, SecretStore.LOCK)) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve(f))))
                    .as(f).isEqualTo("rw-------");
        }
    }

    @Test
    void refusesValuesThatCannotGoInAHeaderWithoutShowingThem() {
        SecretStore store = new SecretStore(dir, FILE_ONLY);
        SecretSpec s = spec("K", "a.example");
        assertThatThrownBy(() -> store.set(s, "short")).hasMessageContaining("has 5 characters");
        assertThatThrownBy(() -> store.set(s, "x".repeat(4097))).hasMessageContaining("has 4097 characters");
        assertThatThrownBy(() -> store.set(s, "secret with space")).hasMessageContaining("a space at position 7")
                .hasMessageNotContaining("secret");
        assertThatThrownBy(() -> store.set(s, "secret12\r\nX-Evil: 1")).hasMessageContaining("a line break");
        assertThatThrownBy(() -> store.set(s, "secret12\0")).hasMessageContaining("a control character");
        assertThatThrownBy(() -> store.set(s, "sécret1234")).hasMessageContaining("a non-ASCII character");
        assertThatThrownBy(() -> store.set(s, "secret12\t")).hasMessageContaining("a control character");
        assertThat(store.list()).isEmpty();

        store.set(s, "12345678");
        store.set(s, "!\"#$%&'()*+,-./0123456789:;<=>?@AZ[\\]^_`az{|}~");
        store.set(s, "k".repeat(4096));
        assertThat(store.value("K")).hasSize(4096);
    }

    @Test
    void refusesACatalogOthersCanRead() throws Exception {
        SecretStore store = new SecretStore(dir, FILE_ONLY);
        store.set(spec("K", "a.example"), "12345678");
        Path catalog = dir.resolve(SecretCatalog.FILE);
        Files.setPosixFilePermissions(catalog, PosixFilePermissions.fromString("rw-r-----"));
        assertThatThrownBy(store::list).isInstanceOf(KosaException.class)
                .satisfies(e -> assertThat(((KosaException) e).suggestion()).startsWith("chmod 600 " + catalog));
    }

    @Test
    void aTamperedCatalogIsCheckedLikeTheCommandLine() throws Exception {
        Path catalog = dir.resolve(SecretCatalog.FILE);
        Files.writeString(catalog, """
                {"format": "kosa8-secrets", "version": 1, "secrets": [{"name": "K", "host": "a.example", "port": 443,
                 "header": "Authorization: Bearer {}\\r\\nX-Evil: 1", "env": "K", "setAt": "2026-01-02T03:04:05Z",
                 "store": "file"}]}""");
        Files.setPosixFilePermissions(catalog, PosixFilePermissions.fromString("rw-------"));
        assertThatThrownBy(() -> new SecretStore(dir, FILE_ONLY).list()).isInstanceOf(KosaException.class)
                .hasMessageContaining("cannot read the list of secrets").hasMessageContaining("no line breaks");
    }

    @Test
    void aListedSecretWhoseValueIsGoneSaysHowToSetItAgain() {
        SecretStore store = new SecretStore(dir, FILE_ONLY);
        store.set(SecretSpec.of("K", "a.example:8443", null, null, T, "file"), "12345678");
        new FileSecretValues(dir).remove("K");
        assertThatThrownBy(() -> store.value("K")).hasMessageContaining("its value is missing from file")
                .satisfies(e -> assertThat(((KosaException) e).suggestion())
                        .isEqualTo("set it again: kosa8 secret set K --host a.example:8443"));
    }

    @Test
    void concurrentWritersLoseNoSecret() throws Exception {
        // Threads here; separate CLI processes take the same file lock.
        int n = 16;
        var pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int k = i;
                done.add(pool.submit((Callable<Void>) () -> {
                    new SecretStore(dir, FILE_ONLY).set(spec("K" + k, "a.example"), "value-of-" + k);
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        SecretStore store = new SecretStore(dir, FILE_ONLY);
        assertThat(store.list()).hasSize(n);
        for (int i = 0; i < n; i++) {
            assertThat(store.value("K" + i)).isEqualTo("value-of-" + i);
        }
    }

    @Test
    void readingUsesTheBackendTheSpecNamesAndSaysWhenItIsOutOfReach() {
        SecretStore store = new SecretStore(dir, new SecretBackends(dir, Map.of(), "Linux", e -> null));
        Path catalogDir = dir;
        new SecretCatalog(catalogDir).write(List.of(SecretSpec.of("K", "a.example", null, null, T, "secret-service"),
                SecretSpec.of("M", "a.example", null, null, T, "keychain")));
        assertThatThrownBy(() -> store.value("K")).isInstanceOf(KosaException.class)
                .hasMessageContaining("the Secret Service cannot be reached from here");
        assertThatThrownBy(() -> store.value("M")).isInstanceOf(KosaException.class)
                .hasMessageContaining("the macOS keychain cannot be reached");
    }
}
