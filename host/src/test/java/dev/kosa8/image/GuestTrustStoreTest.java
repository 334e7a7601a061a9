package dev.kosa8.image;

import dev.kosa8.egress.tls.SandboxCa;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;

import static org.assertj.core.api.Assertions.assertThat;

class GuestTrustStoreTest {
    /**
     * The builder VM runs these two classes on the image's runtime, which has java.base alone and none of
     * kosa8: a JVM limited to java.base, with a class path of only their class files, must make a store of a
     * bundle.
     */
    @Test
    void itsTwoClassesMakeTheStoreWithNothingElseOnTheClassPath(@TempDir Path dir) throws Exception {
        Path classes = dir.resolve("classes");
        for (Class<?> c : new Class<?>[] {JavaTrustStore.class, GuestTrustStore.class}) {
            Path f = classes.resolve(c.getName().replace('.', '/') + ".class");
            Files.createDirectories(f.getParent());
            try (InputStream s = c.getResourceAsStream(c.getSimpleName() + ".class")) {
                Files.write(f, s.readAllBytes());
            }
        }
        Path bundle = dir.resolve("ca-certificates.crt");
        String pem = SandboxCa.loadOrCreate(dir.resolve("one"), "one").certificatePem()
                + SandboxCa.loadOrCreate(dir.resolve("two"), "two").certificatePem();
        Files.writeString(bundle, pem);
        Path store = dir.resolve("etc/ssl/certs/java/cacerts");
        // a JVM of java.base alone, as the image's runtime is, with these two classes and nothing else
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process p = new ProcessBuilder(java, "--limit-modules", "java.base", "-cp", classes.toString(),
                GuestTrustStore.class.getName(), bundle.toString(), store.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(out).isZero();
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, null);
        }
        assertThat(ks.size()).isEqualTo(2);
        assertThat(ks.isCertificateEntry("system-0")).isTrue();
    }
}
