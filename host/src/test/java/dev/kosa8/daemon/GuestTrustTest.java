package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.egress.EgressService;
import dev.kosa8.egress.tls.HostCas;
import dev.kosa8.vm.GuestCommand;
import java.nio.file.Files;
import java.util.List;
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

    /**
     * The script (cold boots) and the files the agent writes (starts from a template) leave the same bytes in every
     * file, with the host's CAs and without them: the script run by the host's shell with its paths moved under a
     * folder of the test's.
     */
    @Test
    void theScriptAndTheWrittenFilesLeaveTheSameTrustWithTheHostsCasAndWithout() throws Exception {
        X509Certificate cert = EgressService.certificateAuthority(dir.resolve("sbx"), "files-test").certificate();
        X509Certificate proxy = EgressService.certificateAuthority(dir.resolve("proxy"), "proxy-test").certificate();
        byte[] system = GuestTrust.pem(EgressService.certificateAuthority(dir.resolve("sys"), "sys-test").certificate());
        byte[] store = "a java store".getBytes(StandardCharsets.US_ASCII);
        HostCas host = new HostCas(List.of(proxy), List.of(dir.resolve("proxy.crt")), List.of());
        for (HostCas cas : List.of(host, HostCas.NONE)) {
            Path root = Files.createDirectories(dir.resolve("root-" + cas.isEmpty()));
            Files.createDirectories(root.resolve("etc/kosa8"));
            Files.createDirectories(root.resolve("etc/ssl/certs"));
            Files.write(root.resolve("etc/kosa8/system-ca.crt"), system);
            String script = GuestTrust.SCRIPT.replace("/etc/", root + "/etc/").replace("/usr/local/", root
                    + "/usr/local/");
            Process p = new ProcessBuilder("sh", "-c", script, "kosa8-ca",
                    Base64.getEncoder().encodeToString(cert.getEncoded()),
                    new String(cas.pem(), StandardCharsets.US_ASCII)).redirectErrorStream(true).start();
            p.getOutputStream().write(store);
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor()).as(out).isZero();

            List<GuestCommand.GuestFile> files = GuestTrust.files(cert, cas, store, system);
            for (GuestCommand.GuestFile f : files) {
                assertThat(new String(Files.readAllBytes(root.resolve(f.path().substring(1))), StandardCharsets.US_ASCII))
                        .as(f.path()).isEqualTo(new String(f.content(), StandardCharsets.US_ASCII));
            }
            String caPem = Files.readString(root.resolve("etc/kosa8/ca.pem"));
            Path hostFile = root.resolve(GuestTrust.HOST_CAS.substring(1));
            if (cas.isEmpty()) {
                assertThat(files).extracting(GuestCommand.GuestFile::path).doesNotContain(GuestTrust.HOST_CAS);
                assertThat(hostFile).doesNotExist();
                assertThat(caPem).isEqualTo(new String(GuestTrust.pem(cert), StandardCharsets.US_ASCII));
            } else {
                assertThat(files).extracting(GuestCommand.GuestFile::path).contains(GuestTrust.HOST_CAS);
                assertThat(caPem).contains(new String(GuestTrust.pem(proxy), StandardCharsets.US_ASCII));
                assertThat(Files.readString(root.resolve("etc/ssl/certs/ca-certificates.crt")))
                        .startsWith(new String(system, StandardCharsets.US_ASCII))
                        .contains(new String(GuestTrust.pem(proxy), StandardCharsets.US_ASCII));
                assertThat(root.resolve("etc/ssl/certs/kosa8-host.pem")).isSymbolicLink();
            }
        }
    }
}
