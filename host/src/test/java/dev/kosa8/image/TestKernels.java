package dev.kosa8.image;

import org.tukaani.xz.LZMA2Options;
import org.tukaani.xz.XZOutputStream;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/** Synthetic kernels for tests: a tiny x86-64 ELF with notes, and a bzImage around a payload. */
final class TestKernels {
    private TestKernels() {
    }

    /** A 64-bit x86 ELF with one PT_NOTE segment holding a Xen note of {@code noteType}. */
    static byte[] elf(int noteType) {
        byte[] name = "Xen\0".getBytes(StandardCharsets.ISO_8859_1);
        ByteBuffer notes = ByteBuffer.allocate(2 * (12 + 4 + 8)).order(ByteOrder.LITTLE_ENDIAN);
        // a harmless note first, so the parser must walk past it
        notes.putInt(4).putInt(8).putInt(6).put(name).putLong(0x1234);
        notes.putInt(4).putInt(8).putInt(noteType).put(name).putLong(0x1000000);
        int phoff = 64;
        int noteOff = phoff + 56;
        ByteBuffer b = ByteBuffer.allocate(noteOff + notes.capacity()).order(ByteOrder.LITTLE_ENDIAN);
        b.put(new byte[] {0x7f, 'E', 'L', 'F', 2, 1, 1, 0});
        b.putShort(0x10, (short) 2).putShort(0x12, (short) 0x3e).putInt(0x14, 1);
        b.putLong(0x20, phoff).putShort(0x34, (short) 64).putShort(0x36, (short) 56).putShort(0x38, (short) 1);
        b.putInt(phoff, 4).putLong(phoff + 8, noteOff).putLong(phoff + 0x20, notes.capacity());
        b.put(noteOff, notes.array());
        return b.array();
    }

    static byte[] xz(byte[] data) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (XZOutputStream xz = new XZOutputStream(out, new LZMA2Options())) {
            xz.write(data);
        }
        return out.toByteArray();
    }

    /**
     * A bzImage: {@code setupSects} sectors of setup after the boot sector, then
     * {@code payloadOffset} bytes of decompressor, the payload, and the 4-byte size
     * the kernel's build appends after it.
     */
    static byte[] bzImage(int setupSects, int protocol, int payloadOffset, byte[] payload) {
        int effective = setupSects == 0 ? 4 : setupSects;
        int start = (effective + 1) * 512 + payloadOffset;
        ByteBuffer b = ByteBuffer.allocate(start + payload.length + 4).order(ByteOrder.LITTLE_ENDIAN);
        b.put(0x1f1, (byte) setupSects);
        b.putShort(0x1fe, (short) 0xAA55);
        b.putInt(0x202, 0x53726448);
        b.putShort(0x206, (short) protocol);
        b.putInt(0x248, payloadOffset);
        b.putInt(0x24c, payload.length);
        b.put(start, payload);
        b.putInt(start + payload.length, 0x00ABCDEF);
        return b.array();
    }
}
