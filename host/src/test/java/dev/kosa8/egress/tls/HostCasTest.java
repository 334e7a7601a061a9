package dev.kosa8.egress.tls;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HostCasTest {
    @TempDir
    Path dir;

    private SandboxCa ca(String id) {
        return SandboxCa.loadOrCreate(dir.resolve("cas").resolve(id), id);
    }

    @Test
    void theLocalCaFoldersAndNamedFilesAreReadEachCertificateOnceAndJunkIsSaidNotFatal() throws Exception {
        SandboxCa a = ca("aaaaaaaaaaaa");
        SandboxCa b = ca("bbbbbbbbbbbb");
        SandboxCa c = ca("cccccccccccc");
        Path local = Files.createDirectories(dir.resolve("local/company"));
        Files.writeString(local.resolve("a.crt"), a.certificatePem());
        Files.writeString(local.resolve("b.pem"), b.certificatePem() + a.certificatePem()); // a again: once
        Files.writeString(local.resolve("readme.txt"), c.certificatePem()); // not a CA file name: not read
        Files.writeString(local.resolve("broken.crt"), "not a certificate");
        Path extra = Files.writeString(dir.resolve("extra.pem"), c.certificatePem());

        HostCas cas = HostCas.read(List.of(dir.resolve("local"), dir.resolve("absent")),
                List.of(extra, dir.resolve("missing.pem")));

        assertThat(cas.certificates()).containsExactly(a.certificate(), b.certificate(), c.certificate());
        assertThat(cas.files()).containsExactly(local.resolve("a.crt"), local.resolve("b.pem"), extra);
        assertThat(cas.problems()).hasSize(2);
        assertThat(cas.problems().get(0)).startsWith(local.resolve("broken.crt").toString());
        assertThat(cas.problems().get(1)).isEqualTo(dir.resolve("missing.pem") + ": no such file");
        assertThat(cas.describe()).startsWith("3 certificates from " + local.resolve("a.crt"));
        assertThat(new String(cas.pem(), StandardCharsets.US_ASCII))
                .isEqualTo(new String(HostCas.pem(a.certificate()), StandardCharsets.US_ASCII)
                        + new String(HostCas.pem(b.certificate()), StandardCharsets.US_ASCII)
                        + new String(HostCas.pem(c.certificate()), StandardCharsets.US_ASCII));
    }

    @Test
    void noFoldersNoCertificates() {
        HostCas none = HostCas.read(List.of(dir.resolve("absent")), List.of());
        assertThat(none.isEmpty()).isTrue();
        assertThat(none.pem()).isEmpty();
        assertThat(none.describe()).startsWith("no locally added CA certificates found");
    }
}
