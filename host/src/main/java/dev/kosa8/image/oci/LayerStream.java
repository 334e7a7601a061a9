package dev.kosa8.image.oci;

import dev.kosa8.host.KosaException;
import io.airlift.compress.v3.zstd.ZstdInputStream;
import java.io.BufferedInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/**
 * A layer blob's uncompressed tar stream: gzip ({@code java.util.zip}), zstd (aircompressor's pure-Java
 * decoder: no JNI library per platform) or none, bounded by {@link ImportLimits#maxLayerStreamBytes()} so a
 * compression bomb stops wherever it hides its bytes (in file content, which {@link RootTree} also bounds, in a
 * folder's size field, in padding or past the archive's end). A damaged stream is a {@link KosaException} naming
 * the layer and its compression, never a decoder's own exception.
 */
final class LayerStream extends FilterInputStream {
    /** The first four bytes of a zstd frame. */
    static final byte[] ZSTD_MAGIC = {0x28, (byte) 0xb5, 0x2f, (byte) 0xfd};

    private final String compression;
    private final long max;
    private final String what;
    private long read;

    private LayerStream(InputStream in, String compression, long max, String what) {
        super(in);
        this.compression = compression;
        this.max = max;
        this.what = what;
    }

    /**
     * @param compression {@code gzip}, {@code zstd} or {@code none}
     * @param what        how errors name the layer
     */
    static InputStream open(Path blob, String compression, ImportLimits limits, String what) throws IOException {
        InputStream raw = new BufferedInputStream(Files.newInputStream(blob), 1 << 16);
        try {
            InputStream plain = switch (compression) {
                case "gzip" -> new GZIPInputStream(raw, 1 << 16);
                case "zstd" -> new ZstdInputStream(raw);
                case "none" -> raw;
                default -> throw RootTree.bad(what, "it is compressed with " + compression
                        + ", which kosa8 does not read (it reads gzip, zstd and uncompressed layers)");
            };
            return new LayerStream(plain, compression, limits.maxLayerStreamBytes(), what);
        } catch (IOException | RuntimeException e) {
            raw.close();
            throw e instanceof KosaException k ? k : damaged(compression, what, e);
        }
    }

    /** How a blob whose descriptor does not say is compressed, from its first bytes. */
    static String sniff(Path blob) throws IOException {
        byte[] b = new byte[4];
        int n;
        try (InputStream in = Files.newInputStream(blob)) {
            n = in.readNBytes(b, 0, 4);
        }
        if (n >= 2 && (b[0] & 0xff) == 0x1f && (b[1] & 0xff) == 0x8b) {
            return "gzip";
        }
        return n == 4 && java.util.Arrays.equals(b, ZSTD_MAGIC) ? "zstd" : "none";
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        int n;
        try {
            n = in.read(b, off, len);
        } catch (java.io.EOFException e) {
            throw RootTree.bad(what, "it is truncated: its " + compression + " stream ends early");
        } catch (IOException | RuntimeException e) {
            throw damaged(compression, what, e); // aircompressor says "Not enough input bytes" for a cut stream
        }
        if (n > 0) {
            read += n;
            if (read > max) {
                throw RootTree.bad(what, "its " + compression + " stream decompresses to more than " + max
                        + " bytes (a compression bomb?)");
            }
        }
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        int len = (int) Math.min(Math.max(n, 0), 1 << 16);
        return Math.max(read(new byte[len], 0, len), 0);
    }

    private static KosaException damaged(String compression, String what, Exception e) {
        if (e instanceof KosaException k) {
            return k;
        }
        String hint = compression.equals("zstd") ? " (or it needs a window over 8 MiB, as `zstd --long` or"
                + " `--ultra` levels make: recompress it at a level up to 19)" : "";
        return RootTree.bad(what, "its " + compression + " stream is damaged" + hint + ": " + e.getMessage());
    }
}
