package dev.kosa8.egress.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import io.netty.handler.ssl.SslContext;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.Key;
import java.security.KeyPair;
import java.security.KeyStore;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.CharRange;
import net.jqwik.api.constraints.Chars;
import net.jqwik.api.constraints.StringLength;
import org.bouncycastle.asn1.x509.AuthorityKeyIdentifier;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.SubjectKeyIdentifier;
import org.bouncycastle.cert.jcajce.JcaX509CertificateHolder;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SandboxCaTest {
    static final String ID = "0123456789ab";
    static final String SERVER_AUTH = "1.3.6.1.5.5.7.3.1";

    /** A clock the test moves by hand. */
    static final class ManualClock extends Clock {
        Instant now = Instant.now();

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    @Nested
    class OnDisk {
        @TempDir
        Path tmp;

        @Test
        void createsAnOwnerOnlyKeyAndAReadableCertificateInAPrivateDirectory() throws Exception {
            Path dir = tmp.resolve("sandboxes/" + ID);
            SandboxCa ca = SandboxCa.loadOrCreate(dir, ID);

            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).isEqualTo("rwx------");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("ca.key"))))
                    .isEqualTo("rw-------");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("ca.pem"))))
                    .isEqualTo("rw-r--r--");
            assertThat(Files.readString(dir.resolve("ca.key"))).startsWith("-----BEGIN PRIVATE KEY-----");
            try (InputStream in = Files.newInputStream(dir.resolve("ca.pem"))) {
                assertThat(CertificateFactory.getInstance("X.509").generateCertificate(in)).isEqualTo(ca.certificate());
            }
            try (var listing = Files.list(dir)) {
                assertThat(listing.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("ca.key", "ca.pem");
            }
        }

        @Test
        void theCaCanSignLeavesButNoFurtherCas() throws Exception {
            X509Certificate c = SandboxCa.loadOrCreate(tmp, ID).certificate();

            assertThat(c.getSubjectX500Principal().getName()).isEqualTo("CN=kosa8 sandbox " + ID + " CA,O=kosa8");
            assertThat(c.getIssuerX500Principal()).isEqualTo(c.getSubjectX500Principal());
            c.verify(c.getPublicKey());
            assertThat(c.getPublicKey().getAlgorithm()).isEqualTo("EC");
            assertThat(c.getSigAlgName()).isEqualTo("SHA256withECDSA");
            assertThat(c.getBasicConstraints()).isZero();
            assertThat(c.getKeyUsage()).containsExactly(false, false, false, false, false, true, true, false, false);
            assertThat(c.getCriticalExtensionOIDs()).containsExactlyInAnyOrder(
                    Extension.basicConstraints.getId(), Extension.keyUsage.getId());
            assertThat(c.getExtensionValue(Extension.subjectKeyIdentifier.getId())).isNotNull();
            assertThat(c.getSerialNumber().signum()).isPositive();
            assertThat(c.getSerialNumber().bitLength()).isLessThanOrEqualTo(128);
            Instant now = Instant.now();
            assertThat(c.getNotBefore().toInstant()).isBetween(now.minus(Duration.ofDays(1)).minusSeconds(60),
                    now.minus(Duration.ofDays(1)).plusSeconds(60));
            assertThat(Duration.between(now, c.getNotAfter().toInstant()).toDays()).isBetween(3650L, 3653L);
        }

        @Test
        void loadingTwiceGivesTheSameCaAndItsKeySignsLeavesTheFirstCertificateVerifies() throws Exception {
            SandboxCa first = SandboxCa.loadOrCreate(tmp, ID);
            SandboxCa second = SandboxCa.loadOrCreate(tmp, ID);

            assertThat(second.certificate()).isEqualTo(first.certificate());
            assertThat(second.certificatePem()).isEqualTo(first.certificatePem());
            second.leafFor("api.example.test").leaf().verify(first.certificate().getPublicKey());
        }

        @Test
        void aCorruptKeyIsRefusedNamingTheFileNotReplaced() throws Exception {
            SandboxCa.loadOrCreate(tmp, ID);
            String pem = Files.readString(tmp.resolve("ca.pem"));
            Files.writeString(tmp.resolve("ca.key"), "-----BEGIN PRIVATE KEY-----\nnot base64!\n-----END PRIVATE KEY-----\n");

            assertThatThrownBy(() -> SandboxCa.loadOrCreate(tmp, ID))
                    .isInstanceOfSatisfying(KosaException.class, e -> {
                        assertThat(e.getMessage()).contains(tmp.resolve("ca.key").toString());
                        assertThat(e.suggestion()).contains("delete ca.key and ca.pem in " + tmp);
                    });
            assertThat(Files.readString(tmp.resolve("ca.pem"))).isEqualTo(pem);
        }

        @Test
        void aCertificateWhoseKeyIsMissingIsRefused() throws Exception {
            SandboxCa.loadOrCreate(tmp, ID);
            Files.delete(tmp.resolve("ca.key"));

            assertThatThrownBy(() -> SandboxCa.loadOrCreate(tmp, ID))
                    .isInstanceOf(KosaException.class)
                    .hasMessageContaining(tmp.resolve("ca.key").toString())
                    .hasMessageContaining("missing");
        }

        @Test
        void aKeyFromAnotherCaIsRefused(@TempDir Path other) throws Exception {
            SandboxCa.loadOrCreate(tmp, ID);
            SandboxCa.loadOrCreate(other, ID);
            Files.copy(other.resolve("ca.key"), tmp.resolve("ca.key"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);

            assertThatThrownBy(() -> SandboxCa.loadOrCreate(tmp, ID))
                    .isInstanceOf(KosaException.class)
                    .hasMessageContaining("does not belong to the certificate");
        }

        @Test
        void aKeyOthersCanReadIsRefused() throws Exception {
            SandboxCa.loadOrCreate(tmp, ID);
            Files.setPosixFilePermissions(tmp.resolve("ca.key"), PosixFilePermissions.fromString("rw-r-----"));

            assertThatThrownBy(() -> SandboxCa.loadOrCreate(tmp, ID))
                    .isInstanceOf(KosaException.class)
                    .hasMessageContaining("open to other users (mode rw-r-----)");
        }

        @Test
        void aKeyLeftWithoutCertificateByAnInterruptedCreationIsReplaced() throws Exception {
            SandboxCa.loadOrCreate(tmp, ID);
            String oldKey = Files.readString(tmp.resolve("ca.key"));
            Files.delete(tmp.resolve("ca.pem"));

            SandboxCa ca = SandboxCa.loadOrCreate(tmp, ID);

            assertThat(Files.readString(tmp.resolve("ca.key"))).isNotEqualTo(oldKey);
            assertThat(SandboxCa.loadOrCreate(tmp, ID).certificate()).isEqualTo(ca.certificate());
        }

        @Test
        void noPublicMethodHandsOutTheCaKey() throws Exception {
            for (Class<?> type : List.of(SandboxCa.class, UpstreamTls.class)) {
                for (Method m : type.getDeclaredMethods()) {
                    if (Modifier.isPublic(m.getModifiers())) {
                        assertThat(m.getReturnType()).as(m.toString())
                                .isNotIn(Key.class, java.security.PrivateKey.class, KeyPair.class, byte[].class);
                    }
                }
            }
            SandboxCa ca = SandboxCa.loadOrCreate(tmp, ID);
            assertThat(ca.certificatePem()).startsWith("-----BEGIN CERTIFICATE-----").doesNotContain("PRIVATE");
            assertThat(ca.toString()).doesNotContain("PRIVATE");
            assertThat(ca.leafFor("a.test").toString()).doesNotContain("private");
        }

        @Test
        void aBadSandboxIdIsRefused() {
            assertThatThrownBy(() -> SandboxCa.loadOrCreate(tmp, "x,O=evil"))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Nested
    class Leaves {
        @TempDir
        Path tmp;

        @Test
        void aLeafValidatesWithTheSandboxCaAsTheOnlyTrustAnchor() throws Exception {
            SandboxCa ca = SandboxCa.loadOrCreate(tmp, ID);
            LeafCertificate leaf = ca.leafFor("api.example.test");

            PKIXParameters params = new PKIXParameters(Set.of(new TrustAnchor(ca.certificate(), null)));
            params.setRevocationEnabled(false);
            CertPathValidator.getInstance("PKIX").validate(
                    CertificateFactory.getInstance("X.509").generateCertPath(List.of(leaf.leaf())), params);
            assertThat(leaf.ca()).isEqualTo(ca.certificate());
        }

        @Test
        void aLeafNamesExactlyTheOneHostAndServesOnlyAsAServer() throws Exception {
            SandboxCa ca = SandboxCa.loadOrCreate(tmp, ID);
            X509Certificate c = ca.leafFor("API.Example.Test").leaf();

            assertThat(c.getSubjectAlternativeNames()).containsExactly(List.of(2, "api.example.test"));
            assertThat(c.getSubjectX500Principal().getName()).isEqualTo("CN=api.example.test");
            assertThat(c.getIssuerX500Principal()).isEqualTo(ca.certificate().getSubjectX500Principal());
            assertThat(c.getExtendedKeyUsage()).containsExactly(SERVER_AUTH);
            assertThat(c.getKeyUsage()).containsExactly(true, false, false, false, false, false, false, false, false);
            assertThat(c.getBasicConstraints()).isEqualTo(-1);
            assertThat(c.getCriticalExtensionOIDs()).contains(Extension.keyUsage.getId());
            var leafExt = new JcaX509CertificateHolder(c).getExtensions();
            var caExt = new JcaX509CertificateHolder(ca.certificate()).getExtensions();
            assertThat(AuthorityKeyIdentifier.fromExtensions(leafExt).getKeyIdentifierObject().getOctets())
                    .isEqualTo(SubjectKeyIdentifier.fromExtensions(caExt).getKeyIdentifier());
            Instant now = Instant.now();
            assertThat(c.getNotBefore().toInstant()).isBetween(now.minus(Duration.ofMinutes(61)), now.minus(Duration.ofMinutes(59)));
            assertThat(c.getNotAfter().toInstant()).isBetween(now.plus(Duration.ofDays(90)).minusSeconds(60),
                    now.plus(Duration.ofDays(90)).plusSeconds(60));
        }

        @Test
        void theSameNameGivesTheCachedLeafAndContext() throws Exception {
            SandboxCa ca = SandboxCa.loadOrCreate(tmp, ID);

            assertThat(ca.leafFor("api.example.test")).isSameAs(ca.leafFor("API.example.TEST"));
            SslContext context = ca.serverContextFor("api.example.test");
            assertThat(ca.serverContextFor("api.example.test")).isSameAs(context);
            assertThat(ca.leafFor("api.example.test")).isSameAs(ca.leafFor("api.example.test"));
        }

        @Test
        void aLeafIsMintedAgainWhenLessThanADayRemains() throws Exception {
            ManualClock clock = new ManualClock();
            SandboxCa ca = SandboxCa.loadOrCreate(tmp, ID, clock, SandboxCa.CACHE_CAPACITY);
            LeafCertificate first = ca.leafFor("api.example.test");
            SslContext firstContext = ca.serverContextFor("api.example.test");

            clock.now = clock.now.plus(Duration.ofDays(88));
            assertThat(ca.leafFor("api.example.test")).isSameAs(first);

            clock.now = clock.now.plus(Duration.ofDays(1)).plusSeconds(1);
            LeafCertificate renewed = ca.leafFor("api.example.test");
            assertThat(renewed).isNotSameAs(first);
            assertThat(renewed.leaf().getNotAfter().toInstant()).isAfter(first.leaf().getNotAfter().toInstant());
            assertThat(ca.serverContextFor("api.example.test")).isNotSameAs(firstContext);
        }

        @Test
        void theCacheDropsTheLeastRecentlyUsedName() throws Exception {
            SandboxCa ca = SandboxCa.loadOrCreate(tmp, ID, Clock.systemUTC(), 2);
            LeafCertificate a = ca.leafFor("a.test");
            LeafCertificate b = ca.leafFor("b.test");
            assertThat(ca.leafFor("a.test")).isSameAs(a);

            ca.leafFor("c.test");

            assertThat(ca.leafFor("a.test")).isSameAs(a);
            assertThat(ca.leafFor("b.test")).isNotSameAs(b);
        }

        @Test
        void twoHundredNamesAreMintedWithOneSharedLeafKey() throws Exception {
            SandboxCa ca = SandboxCa.loadOrCreate(tmp, ID);
            List<LeafCertificate> leaves = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                leaves.add(ca.leafFor("host-" + i + ".example.test"));
            }

            assertThat(leaves.stream().map(l -> l.leaf().getSerialNumber()).distinct()).hasSize(200);
            assertThat(leaves.stream().map(l -> l.leaf().getPublicKey()).distinct()).hasSize(1);
            assertThat(leaves.stream().map(LeafCertificate::key).distinct()).hasSize(1);
        }

        @Test
        void edgeCaseNamesAreAccepted() throws Exception {
            SandboxCa ca = SandboxCa.loadOrCreate(tmp, ID);
            String label63 = "a".repeat(63);
            String name253 = String.join(".", label63, label63, label63, "b".repeat(61));

            assertThat(ca.leafFor("localhost").leaf().getSubjectAlternativeNames()).containsExactly(List.of(2, "localhost"));
            assertThat(ca.leafFor(label63 + ".test")).isNotNull();
            assertThat(name253).hasSize(253);
            X509Certificate longLeaf = ca.leafFor(name253).leaf();
            assertThat(longLeaf.getSubjectAlternativeNames()).containsExactly(List.of(2, name253));
            assertThat(longLeaf.getSubjectX500Principal().getName()).as("CN is at most 64 characters").isEmpty();
            assertThat(longLeaf.getCriticalExtensionOIDs()).contains(Extension.subjectAlternativeName.getId());
            assertThat(ca.leafFor("xn--bcher-kva.example")).isNotNull();
            assertThat(ca.leafFor("1.2.3.example")).isNotNull();
        }

        @ParameterizedTest
        @ValueSource(strings = {"", "*.example.com", "*", "1.2.3.4", "127.1", "0x7f.1", "::1", "[::1]", "a..b",
                "-a.com", "a-.com", "a.-b.com", ".example.com", "example.com.", "exa_mple.com", "exa mple.com",
                "\u212Aelvin.com", "b\u00fccher.example", "a.b/c", "a.b:443", "a\u0000.com"})
        void badNamesAreRefused(String name) throws Exception {
            SandboxCa ca = SandboxCa.loadOrCreate(tmp, ID);
            assertThatThrownBy(() -> ca.leafFor(name)).isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        void tooLongNamesAndLabelsAreRefused() throws Exception {
            SandboxCa ca = SandboxCa.loadOrCreate(tmp, ID);
            String label63 = "a".repeat(63);
            String name254 = String.join(".", label63, label63, label63, "b".repeat(62));
            assertThat(name254).hasSize(254);

            assertThatThrownBy(() -> ca.leafFor(name254)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> ca.leafFor("a".repeat(64) + ".test")).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> ca.leafFor(null)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Nested
    class Handshake {
        @TempDir
        Path tmp;

        @Test
        void aGuestTrustingOnlyTheSandboxCaConnectsToTheNameAndGetsHttp11() throws Exception {
            SandboxCa ca = SandboxCa.loadOrCreate(tmp, ID);
            try (LoopbackTlsServer server = new LoopbackTlsServer(ca.leafFor("api.example.test").serverContext())) {
                try (SSLSocket s = guestSocket(ca.certificate(), server.port(), "api.example.test")) {
                    s.startHandshake();
                    assertThat(s.getApplicationProtocol()).isEqualTo("http/1.1");
                    assertThat(s.getSession().getProtocol()).isIn("TLSv1.3", "TLSv1.2");
                    OutputStream out = s.getOutputStream();
                    out.write("ping\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    assertThat(new String(s.getInputStream().readNBytes(5), StandardCharsets.US_ASCII)).isEqualTo("ping\n");
                }
            }
        }

        @Test
        void aGuestLimitedToTls12AlsoConnects() throws Exception {
            SandboxCa ca = SandboxCa.loadOrCreate(tmp, ID);
            try (LoopbackTlsServer server = new LoopbackTlsServer(ca.serverContextFor("api.example.test"));
                    SSLSocket s = guestSocket(ca.certificate(), server.port(), "api.example.test")) {
                s.setEnabledProtocols(new String[] {"TLSv1.2"});
                s.startHandshake();
                assertThat(s.getSession().getProtocol()).isEqualTo("TLSv1.2");
                assertThat(s.getApplicationProtocol()).isEqualTo("http/1.1");
            }
        }

        @Test
        void aGuestAskingForAnotherNameFailsVerification() throws Exception {
            SandboxCa ca = SandboxCa.loadOrCreate(tmp, ID);
            try (LoopbackTlsServer server = new LoopbackTlsServer(ca.serverContextFor("api.example.test"));
                    SSLSocket s = guestSocket(ca.certificate(), server.port(), "other.example.test")) {
                assertThatThrownBy(s::startHandshake)
                        .isInstanceOf(SSLHandshakeException.class)
                        .hasMessageContaining("other.example.test");
            }
        }

        /** A client as the guest will be: trusting the sandbox CA alone, checking names, sending SNI. */
        private SSLSocket guestSocket(X509Certificate caCert, int port, String name) throws Exception {
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("sandbox-ca", caCert);
            TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
            tmf.init(trust);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, tmf.getTrustManagers(), null);
            Socket plain = new Socket("127.0.0.1", port);
            SSLSocket s = (SSLSocket) context.getSocketFactory().createSocket(plain, name, port, true);
            s.setSoTimeout(10_000);
            SSLParameters p = s.getSSLParameters();
            p.setEndpointIdentificationAlgorithm("HTTPS");
            p.setServerNames(List.of(new SNIHostName(name)));
            p.setApplicationProtocols(new String[] {"h2", "http/1.1"});
            s.setSSLParameters(p);
            return s;
        }
    }

    /** Whatever comes in, a name is refused with IllegalArgumentException or accepted in canonical form. */
    @Property(tries = 3000)
    void anAcceptedNameIsLowerCaseLdhAndShortEnough(
            @ForAll @StringLength(max = 300) @Chars({'.', '-', '*', ':', '_', '\u212A', '\u0130', 'A', 'x'})
            @CharRange(from = '0', to = '9') @CharRange(from = 'a', to = 'f') String raw) {
        DnsName name;
        try {
            name = new DnsName(raw);
        } catch (IllegalArgumentException refused) {
            return;
        }
        assertThat(name.value()).hasSizeLessThanOrEqualTo(253).matches("[a-z0-9.-]+")
                .isEqualTo(raw.toLowerCase(java.util.Locale.ROOT))
                .doesNotStartWith(".").doesNotEndWith(".").doesNotContain("..")
                .doesNotMatch("(.*\\.)?([0-9]+|0x[0-9a-f]*)");
        Set<String> labels = new HashSet<>(List.of(name.value().split("\\.")));
        assertThat(labels).allSatisfy(l -> assertThat(l).hasSizeBetween(1, 63).doesNotStartWith("-").doesNotEndWith("-"));
    }
}
