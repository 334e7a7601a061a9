package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.egress.EgressService;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GuestTrustTest {
    @TempDir
    Path dir;

    /**
     * A sandbox made from a template gets its CA written as files, a cold-booted one by the script: both must
     * leave the same bytes, or the bundle would differ by how the sandbox started. Compared with the script's own
     * pipeline run by the host's shell.
     */
    @Test
    void thePemWrittenAsAFileIsByteForByteWhatTheScriptWrites() throws Exception {
        X509Certificate cert = EgressService.certificateAuthority(dir, "pem-test").certificate();
        String der = Base64.getEncoder().encodeToString(cert.getEncoded());
        Process p = new ProcessBuilder("sh", "-c", "{ echo \"-----BEGIN CERTIFICATE-----\"; echo \"$1\" | fold -w 64;"
                + " echo \"-----END CERTIFICATE-----\"; }", "pem", der).redirectErrorStream(true).start();
        byte[] script = p.getInputStream().readAllBytes();
        assertThat(p.waitFor()).isZero();

        byte[] pem = GuestTrust.pem(cert);

        assertThat(new String(pem, StandardCharsets.US_ASCII)).isEqualTo(new String(script, StandardCharsets.US_ASCII));
        assertThat(der.length()).as("the certificate spans several lines, so the folding is tested").isGreaterThan(128);
    }
}
