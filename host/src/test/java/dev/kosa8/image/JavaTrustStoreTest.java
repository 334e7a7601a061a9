package dev.kosa8.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.egress.tls.SandboxCa;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Collections;
import java.util.List;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JavaTrustStoreTest {
    @TempDir
    Path tmp;

    SandboxCa ca(String id) {
        return SandboxCa.loadOrCreate(tmp.resolve(id), id);
    }

    byte[] bundle(String... ids) {
        StringBuilder pem = new StringBuilder();
        for (String id : ids) {
            pem.append(ca(id).certificatePem());
        }
        return pem.toString().getBytes(StandardCharsets.US_ASCII);
    }

    static X509TrustManager trustManager(KeyStore store) throws Exception {
        TrustManagerFactory f = TrustManagerFactory.getInstance("PKIX");
        f.init(store);
        return (X509TrustManager) f.getTrustManagers()[0];
    }

    @Test
    void everyCertificateOfABundleIsRead() throws Exception {
        List<X509Certificate> certs = JavaTrustStore.readPem(bundle("aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"));

        assertThat(certs).extracting(c -> c.getSubjectX500Principal().getName()).containsExactly(
                "CN=kosa8 sandbox aaaaaaaaaaaa CA,O=kosa8", "CN=kosa8 sandbox bbbbbbbbbbbb CA,O=kosa8",
                "CN=kosa8 sandbox cccccccccccc CA,O=kosa8");
    }

    @Test
    void aBundleWithoutCertificatesOrWithGarbageIsRefused() {
        assertThatThrownBy(() -> JavaTrustStore.readPem(new byte[0])).isInstanceOf(CertificateException.class);
        byte[] notACertificate = "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n"
                .getBytes(StandardCharsets.US_ASCII);
        assertThatThrownBy(() -> JavaTrustStore.readPem(notACertificate))
                .isInstanceOf(CertificateException.class);
    }

    @Test
    void theStoreReadsWithoutAPasswordAndWithDebiansDefaultOneAndHoldsTrustedEntriesOnly() throws Exception {
        List<X509Certificate> system = JavaTrustStore.readPem(bundle("aaaaaaaaaaaa", "bbbbbbbbbbbb"));
        X509Certificate sandbox = ca("dddddddddddd").certificate();
        byte[] p12 = JavaTrustStore.pkcs12(system, sandbox);

        for (char[] password : new char[][] {null, "changeit".toCharArray()}) {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(new ByteArrayInputStream(p12), password);
            assertThat(Collections.list(store.aliases())).containsExactlyInAnyOrder(
                    "system-0", "system-1", JavaTrustStore.SANDBOX_ALIAS);
            for (String alias : Collections.list(store.aliases())) {
                assertThat(store.isCertificateEntry(alias)).as(alias).isTrue();
            }
            assertThat(store.getCertificate(JavaTrustStore.SANDBOX_ALIAS)).isEqualTo(sandbox);
            assertThat(store.getCertificate("system-1")).isEqualTo(system.get(1));
        }
        // the file as a JDK finds it on disk: its type is detected from the bytes
        Path file = tmp.resolve("cacerts");
        Files.write(file, p12);
        assertThat(KeyStore.getInstance(file.toFile(), (char[]) null).size()).isEqualTo(3);
    }

    @Test
    void aJavaClientTrustsLeavesTheSandboxCaMintsOnlyWhenTheStoreHoldsIt() throws Exception {
        SandboxCa sandbox = ca("eeeeeeeeeeee");
        X509Certificate[] chain = {sandbox.leafFor("rules.test").leaf()};
        List<X509Certificate> system = JavaTrustStore.readPem(bundle("aaaaaaaaaaaa"));

        KeyStore with = KeyStore.getInstance("PKCS12");
        with.load(new ByteArrayInputStream(JavaTrustStore.pkcs12(system, sandbox.certificate())), null);
        trustManager(with).checkServerTrusted(chain, "ECDHE_ECDSA");

        KeyStore without = KeyStore.getInstance("PKCS12");
        without.load(new ByteArrayInputStream(JavaTrustStore.pkcs12(system, null)), null);
        assertThatThrownBy(() -> trustManager(without).checkServerTrusted(chain, "ECDHE_ECDSA"))
                .isInstanceOf(CertificateException.class);
    }

    @Test
    void theHostsCasJoinTheStoreUnderTheirOwnAliasesAndAreTrusted() throws Exception {
        SandboxCa proxy = ca("ffffffffffff");
        List<X509Certificate> system = JavaTrustStore.readPem(bundle("aaaaaaaaaaaa"));
        byte[] p12 = JavaTrustStore.pkcs12(system, ca("dddddddddddd").certificate(),
                List.of(proxy.certificate(), ca("999999999999").certificate()));
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(new ByteArrayInputStream(p12), null);
        assertThat(Collections.list(store.aliases())).containsExactlyInAnyOrder("system-0",
                JavaTrustStore.SANDBOX_ALIAS, "kosa8-host-0", "kosa8-host-1");
        assertThat(store.getCertificate("kosa8-host-0")).isEqualTo(proxy.certificate());
        // a server behind the proxy shows the proxy's leaf: trusted through the host's CA
        trustManager(store).checkServerTrusted(new X509Certificate[] {proxy.leafFor("registry.npmjs.org").leaf()},
                "ECDHE_ECDSA");
    }

    @Test
    void theHostsOwnSystemBundleMakesAStoreWhenThereIsOne() throws Exception {
        Path debian = Path.of("/etc/ssl/certs/ca-certificates.crt");
        // a host without Debian's bundle skips this; the generated bundles above cover the format
        Assumptions.assumeTrue(Files.isRegularFile(debian), "no " + debian + " on this host");
        List<X509Certificate> system = JavaTrustStore.readPem(Files.readAllBytes(debian));
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(new ByteArrayInputStream(JavaTrustStore.pkcs12(system, null)), null);
        assertThat(store.size()).isEqualTo(system.size()).isGreaterThan(50);
    }
}
