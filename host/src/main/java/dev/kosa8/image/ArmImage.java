package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * An arm64 Linux kernel {@code Image} (Documentation/arch/arm64/booting.rst): a 64-byte header whose magic
 * {@code ARM\x64} sits at offset 56, loaded by QEMU's {@code -kernel} as it is. Debian's arm64 packages ship
 * it uncompressed as {@code vmlinuz-*} (no {@code CONFIG_EFI_ZBOOT}); a compressed one is refused here rather
 * than handed to a QEMU that cannot boot it.
 */
final class ArmImage {
    static final int MAGIC_OFFSET = 56;
    static final int MAGIC = 0x644d5241; // "ARM\x64", little-endian
    private static final int HEADER = 64;

    private ArmImage() {
    }

    /** Copies {@code image} to {@code target} after checking its header. */
    static void copy(Path image, Path target) throws IOException {
        byte[] head;
        try (InputStream in = Files.newInputStream(image)) {
            head = in.readNBytes(HEADER);
        }
        if (!isImage(head)) {
            throw new KosaException(KosaException.Kind.IMAGE, "the kernel " + image.getFileName()
                    + " is not an uncompressed arm64 Image (no ARM\\x64 magic at offset 56)",
                    "use Debian's linux-image-arm64, whose vmlinuz is one");
        }
        Files.copy(image, target, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Whether these first bytes are an arm64 Image's header. */
    static boolean isImage(byte[] head) {
        return head.length >= HEADER
                && ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).getInt(MAGIC_OFFSET) == MAGIC;
    }
}
