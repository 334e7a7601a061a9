package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BzImageTest {
    @TempDir
    Path tmp;

    @Test
    void locatesThePayloadFromSetupSectsAndPayloadOffset() {
        byte[] payload = {(byte) 0xfd, '7', 'z', 'X', 'Z', 0, 1, 2, 3};
        byte[] file = TestKernels.bzImage(39, 0x20f, 0x2cc, payload);

        BzImage header = BzImage.parse(file);

        assertThat(header.setupSects()).isEqualTo(39);
        assertThat(header.protocolVersion()).isEqualTo(0x20f);
        assertThat(header.payloadStart()).isEqualTo(40 * 512 + 0x2cc);
        assertThat(header.payloadLength()).isEqualTo(payload.length);
        ByteBuffer slice = header.payload(file);
        byte[] got = new byte[slice.remaining()];
        slice.get(got);
        assertThat(got).isEqualTo(payload);
        assertThat(KernelCompression.detect(header.payload(file))).isEqualTo(KernelCompression.XZ);
    }

    @Test
    void setupSectsZeroMeansFour() {
        byte[] file = TestKernels.bzImage(0, 0x20f, 16, new byte[] {0x1f, (byte) 0x8b, 8});
        assertThat(BzImage.parse(file).payloadStart()).isEqualTo(5 * 512 + 16);
    }

    @Test
    void refusesAFileWithoutTheHdrSMagic() {
        byte[] file = TestKernels.bzImage(4, 0x20f, 0, new byte[] {1});
        file[0x202] = 'X';
        assertThatThrownBy(() -> BzImage.parse(file)).isInstanceOf(KosaException.class)
                .hasMessageContaining("not an x86 bzImage").hasMessageContaining("HdrS");
    }

    @Test
    void refusesABootProtocolOlderThan208() {
        byte[] file = TestKernels.bzImage(4, 0x207, 0, new byte[] {1});
        assertThatThrownBy(() -> BzImage.parse(file)).hasMessageContaining("boot protocol 2.7");
    }

    @Test
    void refusesAPayloadRunningPastTheEnd() {
        byte[] file = TestKernels.bzImage(4, 0x20f, 0, new byte[] {1, 2, 3});
        ByteBuffer.wrap(file).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(0x24c, 1 << 20);
        assertThatThrownBy(() -> BzImage.parse(file)).hasMessageContaining("runs past the end");
    }

    @Test
    void extractsTheXzCompressedElfAndChecksItsPvhNote() throws IOException {
        byte[] elf = TestKernels.elf(ElfKernel.XEN_ELFNOTE_PHYS32_ENTRY);
        Path bz = Files.write(tmp.resolve("vmlinuz"), TestKernels.bzImage(27, 0x20f, 0x3b0, TestKernels.xz(elf)));

        KernelExtractor.extract(bz, tmp.resolve("vmlinux"));

        assertThat(tmp.resolve("vmlinux")).hasBinaryContent(elf);
    }

    @Test
    void extractsAGzipCompressedElf() throws IOException {
        byte[] elf = TestKernels.elf(ElfKernel.XEN_ELFNOTE_PHYS32_ENTRY);
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(gz)) {
            out.write(elf);
        }
        Path bz = Files.write(tmp.resolve("vmlinuz"), TestKernels.bzImage(27, 0x20f, 0x100, gz.toByteArray()));

        KernelExtractor.extract(bz, tmp.resolve("vmlinux"));

        assertThat(tmp.resolve("vmlinux")).hasBinaryContent(elf);
    }

    @Test
    void namesTheCompressionItCannotDecompress() throws IOException {
        byte[] zstd = {0x28, (byte) 0xb5, 0x2f, (byte) 0xfd, 0, 0, 0};
        Path bz = Files.write(tmp.resolve("vmlinuz"), TestKernels.bzImage(27, 0x20f, 0x100, zstd));

        assertThatThrownBy(() -> KernelExtractor.extract(bz, tmp.resolve("vmlinux")))
                .isInstanceOf(KosaException.class)
                .hasMessageContaining("compressed with ZSTD")
                .hasMessageContaining("handles xz and gzip");
    }

    @Test
    void refusesAKernelWithoutAPvhEntry() throws IOException {
        byte[] elf = TestKernels.elf(17);
        Path bz = Files.write(tmp.resolve("vmlinuz"), TestKernels.bzImage(27, 0x20f, 0x100, TestKernels.xz(elf)));

        assertThatThrownBy(() -> KernelExtractor.extract(bz, tmp.resolve("vmlinux")))
                .isInstanceOf(KosaException.class)
                .hasMessageContaining("XEN_ELFNOTE_PHYS32_ENTRY");
    }
}
