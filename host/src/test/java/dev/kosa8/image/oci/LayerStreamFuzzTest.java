package dev.kosa8.image.oci;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * A layer's compressed stream is untrusted: whatever its bytes (a real zstd or gzip stream with bytes flipped,
 * cut short, or noise), reading it through {@link LayerStream} gives bytes (within the stream bound) or a
 * {@link KosaException} naming the layer, never a decoder's own exception (aircompressor throws unchecked ones).
 */
class LayerStreamFuzzTest {
    private static final byte[] TAR = new TestTar().dir("etc/").file("etc/a", "hello ".repeat(400))
            .pax("SCHILY.xattr.user.k", "v").file("b", new String(new char[3000]).replace('\0', 'x')).bytes();
    private static final byte[] ZSTD;
    private static final byte[] GZIP;

    static {
        try {
            ZSTD = TestImages.zstd(TAR);
            GZIP = TestImages.gzip(TAR);
        } catch (IOException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @Property(tries = 500)
    void anyZstdBytesDecompressWithinTheBoundOrAreRefusedNamingTheLayer(@ForAll("zstdStreams") byte[] blob)
            throws IOException {
        read(blob, "zstd");
    }

    @Property(tries = 200)
    void anyGzipBytesDecompressWithinTheBoundOrAreRefusedNamingTheLayer(@ForAll("gzipStreams") byte[] blob)
            throws IOException {
        read(blob, "gzip");
    }

    private static void read(byte[] blob, String compression) throws IOException {
        Path f = Files.createTempFile("kosa8-layer-fuzz", ".blob");
        try {
            Files.write(f, blob);
            ImportLimits limits = ImportLimits.DEFAULT.withMaxLayerStreamBytes(1 << 20);
            try (InputStream in = LayerStream.open(f, compression, limits, "layer 9")) {
                byte[] out = in.readAllBytes();
                assertThat(out.length).isLessThanOrEqualTo(1 << 20);
            } catch (KosaException e) {
                assertThat(e.getMessage()).startsWith("layer 9: ");
            }
        } finally {
            Files.deleteIfExists(f);
        }
    }

    @Provide
    Arbitrary<byte[]> zstdStreams() {
        return mutated(ZSTD);
    }

    @Provide
    Arbitrary<byte[]> gzipStreams() {
        return mutated(GZIP);
    }

    private static Arbitrary<byte[]> mutated(byte[] base) {
        Arbitrary<byte[]> flips = Arbitraries.integers().between(0, base.length - 1).list().ofMinSize(1).ofMaxSize(6)
                .flatMap(positions -> Arbitraries.bytes().list().ofSize(positions.size()).map(values -> {
                    byte[] b = base.clone();
                    for (int i = 0; i < positions.size(); i++) {
                        b[positions.get(i)] = values.get(i);
                    }
                    return b;
                }));
        Arbitrary<byte[]> cuts = Arbitraries.integers().between(0, base.length).map(n -> Arrays.copyOf(base, n));
        Arbitrary<byte[]> noise = Arbitraries.bytes().array(byte[].class).ofMaxSize(2000).map(b -> {
            byte[] out = Arrays.copyOf(LayerStream.ZSTD_MAGIC, 4 + b.length);
            System.arraycopy(b, 0, out, 4, b.length);
            return out;
        });
        return Arbitraries.oneOf(flips, cuts, noise);
    }
}
