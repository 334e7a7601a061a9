package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import org.tukaani.xz.SingleXZInputStream;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/**
 * Turns a bzImage into the uncompressed ELF {@code vmlinux} inside it, which
 * QEMU boots directly through its PVH entry point (no decompression in the
 * guest, which costs seconds under TCG).
 */
final class KernelExtractor {
    private KernelExtractor() {
    }

    /** Writes the vmlinux of {@code bzImage} to {@code vmlinux} and checks it can be booted by PVH. */
    static void extract(Path bzImage, Path vmlinux) throws IOException {
        byte[] file = Files.readAllBytes(bzImage);
        BzImage header = BzImage.parse(file);
        ByteBuffer payload = header.payload(file);
        KernelCompression compression = KernelCompression.detect(payload);
        if (!compression.supported()) {
            throw new KosaException(KosaException.Kind.IMAGE,
                    "the kernel " + bzImage.getFileName() + " is compressed with " + compression
                            + ", which the image builder cannot decompress (it handles xz and gzip)",
                    "use a kernel package built with CONFIG_KERNEL_XZ or CONFIG_KERNEL_GZIP, such as Debian 12's linux-image-amd64");
        }
        try (InputStream in = decompressor(compression, payload);
             OutputStream out = Files.newOutputStream(vmlinux)) {
            in.transferTo(out);
        }
        ElfKernel.verifyPvh(vmlinux);
    }

    private static InputStream decompressor(KernelCompression c, ByteBuffer payload) throws IOException {
        InputStream raw = new ByteArrayInputStream(payload.array(),
                payload.arrayOffset() + payload.position(), payload.remaining());
        return switch (c) {
            // One stream exactly: the kernel's build appends the uncompressed size after it.
            case XZ -> new SingleXZInputStream(raw);
            case GZIP -> new GZIPInputStream(raw, 1 << 16);
            default -> throw new IllegalStateException(c + " is not supported");
        };
    }
}
