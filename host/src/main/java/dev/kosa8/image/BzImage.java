package dev.kosa8.image;

import dev.kosa8.host.KosaException;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The x86 boot protocol header of a {@code bzImage} ({@code /boot/vmlinuz-*}),
 * reduced to what locates the compressed kernel inside it.
 *
 * <p>See the kernel's {@code Documentation/arch/x86/boot.rst}: {@code setup_sects}
 * at 0x1f1 (0 means 4), the magic {@code HdrS} at 0x202, the protocol version at
 * 0x206, {@code payload_offset} at 0x248 and {@code payload_length} at 0x24c
 * (protocol 2.08 and later). The payload starts after the real-mode setup code,
 * {@code (setup_sects + 1) * 512} bytes in, plus {@code payload_offset}.
 */
record BzImage(int setupSects, int protocolVersion, long payloadOffset, long payloadLength) {

    static final int HEADER_END = 0x250;

    BzImage {
        if (setupSects < 1 || payloadOffset < 0 || payloadLength <= 0) {
            throw new IllegalArgumentException("bad bzImage header values");
        }
    }

    /** Parses the header of a whole bzImage file, checking the payload lies inside it. */
    static BzImage parse(byte[] file) {
        if (file.length < HEADER_END) {
            throw notBzImage("the file is only " + file.length + " bytes");
        }
        ByteBuffer b = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        if (b.getShort(0x1fe) != (short) 0xAA55 || b.getInt(0x202) != 0x53726448) { // "HdrS"
            throw notBzImage("no boot sector signature or HdrS magic");
        }
        int version = Short.toUnsignedInt(b.getShort(0x206));
        if (version < 0x208) {
            throw notBzImage("boot protocol " + (version >> 8) + "." + (version & 0xff)
                    + " predates payload_offset (2.08)");
        }
        int setupSects = Byte.toUnsignedInt(b.get(0x1f1));
        BzImage image = new BzImage(setupSects == 0 ? 4 : setupSects, version,
                Integer.toUnsignedLong(b.getInt(0x248)), Integer.toUnsignedLong(b.getInt(0x24c)));
        if (image.payloadStart() + image.payloadLength() > file.length) {
            throw notBzImage("the payload (" + image.payloadLength() + " bytes at " + image.payloadStart()
                    + ") runs past the end of the file (" + file.length + " bytes)");
        }
        return image;
    }

    long payloadStart() {
        return (setupSects + 1L) * 512 + payloadOffset;
    }

    /** The compressed kernel: a slice of {@code file}, which must be the one parsed. */
    ByteBuffer payload(byte[] file) {
        return ByteBuffer.wrap(file, (int) payloadStart(), (int) payloadLength()).slice();
    }

    private static KosaException notBzImage(String why) {
        return new KosaException(KosaException.Kind.IMAGE, "the kernel is not an x86 bzImage: " + why,
                "the image builder expects Debian's linux-image-*-amd64 package");
    }
}
