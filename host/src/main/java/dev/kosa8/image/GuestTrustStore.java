package dev.kosa8.image;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The image's Java trust store, made inside the builder VM ({@link VmRootfs}) from the bundle that
 * {@code ca-certificates} wrote there: {@code java -cp CLASSES dev.kosa8.image.GuestTrustStore BUNDLE STORE}.
 * It runs on the image's own runtime, which has {@code java.base} alone, so it and {@link JavaTrustStore}
 * use nothing else; the builder is handed their class files (a test checks that they load without the rest).
 */
public final class GuestTrustStore {
    private GuestTrustStore() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: GuestTrustStore BUNDLE STORE");
            System.exit(2);
        }
        byte[] bundle = Files.readAllBytes(Path.of(args[0]));
        Path store = Path.of(args[1]);
        Files.createDirectories(store.getParent());
        Files.write(store, JavaTrustStore.pkcs12(JavaTrustStore.readPem(bundle), null));
    }
}
