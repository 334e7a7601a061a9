package dev.kosa8.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ArmImageTest {
    @TempDir
    Path dir;

    static byte[] image(int size) {
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(0, 0x91005a4d); // the code0 word Debian's Image starts with (an EFI stub's "MZ")
        b.putInt(ArmImage.MAGIC_OFFSET, ArmImage.MAGIC);
        return b.array();
    }

    @Test
    void anUncompressedImageIsKeptAsItIs() throws Exception {
        byte[] bytes = image(4096);
        Path src = Files.write(dir.resolve("vmlinuz-6.12.0-arm64"), bytes);
        ArmImage.copy(src, dir.resolve("vmlinux"));
        assertThat(dir.resolve("vmlinux")).hasBinaryContent(bytes);
        assertThat(new String(bytes, ArmImage.MAGIC_OFFSET, 4, java.nio.charset.StandardCharsets.ISO_8859_1))
                .isEqualTo("ARM\u0064");
    }

    @Test
    void aCompressedOrForeignKernelIsRefusedAndNothingWritten() throws Exception {
        var gz = new java.io.ByteArrayOutputStream();
        try (var out = new GZIPOutputStream(gz)) {
            out.write(image(4096));
        }
        for (byte[] bad : new byte[][] {gz.toByteArray(), new byte[10], new byte[4096]}) {
            Path src = Files.write(dir.resolve("vmlinuz"), bad);
            assertThatThrownBy(() -> ArmImage.copy(src, dir.resolve("out"))).isInstanceOf(KosaException.class)
                    .hasMessageContaining("not an uncompressed arm64 Image");
            assertThat(dir.resolve("out")).doesNotExist();
        }
    }
}
