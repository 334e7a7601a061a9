package dev.kosa8.image;

import java.nio.ByteBuffer;

/** How a bzImage's payload is compressed, recognised by its first bytes. */
enum KernelCompression {
    XZ(true, 0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00),
    GZIP(true, 0x1f, 0x8b),
    ZSTD(false, 0x28, 0xb5, 0x2f, 0xfd),
    BZIP2(false, 'B', 'Z', 'h'),
    LZ4(false, 0x02, 0x21, 0x4c, 0x18),
    LZO(false, 0x89, 'L', 'Z', 'O'),
    LZMA(false, 0x5d, 0x00, 0x00),
    UNKNOWN(false);

    private final boolean supported;
    private final int[] magic;

    KernelCompression(boolean supported, int... magic) {
        this.supported = supported;
        this.magic = magic;
    }

    boolean supported() {
        return supported;
    }

    static KernelCompression detect(ByteBuffer payload) {
        for (KernelCompression c : values()) {
            if (c.magic.length > 0 && c.matches(payload)) {
                return c;
            }
        }
        return UNKNOWN;
    }

    private boolean matches(ByteBuffer payload) {
        if (payload.remaining() < magic.length) {
            return false;
        }
        for (int i = 0; i < magic.length; i++) {
            if (Byte.toUnsignedInt(payload.get(payload.position() + i)) != magic[i]) {
                return false;
            }
        }
        return true;
    }
}
