package dev.kosa8.image;

import dev.kosa8.egress.tls.SandboxCa;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;

import static org.assertj.core.api.Assertions.assertThat;

class GuestTrustStoreTest {
    /**
     * The builder VM runs these two classes on the image's runtime, which has java.base alone and none of
     * kosa8: loaded from a folder holding only their class files, with no parent but the JDK's platform
     * classes, they must make a store of a bundle.
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
        try (URLClassLoader alone = new URLClassLoader(new URL[] {classes.toUri().toURL()},
                ClassLoader.getPlatformClassLoader())) {
            Class<?> main = alone.loadClass(GuestTrustStore.class.getName());
            assertThat(main.getClassLoader()).isSameAs(alone);
            main.getMethod("main", String[].class).invoke(null, (Object) new String[] {bundle.toString(), store.toString()});
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, null);
        }
        assertThat(ks.size()).isEqualTo(2);
        assertThat(ks.isCertificateEntry("system-0")).isTrue();
    }
}
