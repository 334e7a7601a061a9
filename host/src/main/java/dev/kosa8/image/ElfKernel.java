package dev.kosa8.image;

import dev.kosa8.host.KosaException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Checks that an uncompressed kernel is a 64-bit x86 ELF carrying the Xen ELF
 * note {@code XEN_ELFNOTE_PHYS32_ENTRY} (type 18): that note is the PVH entry
 * point QEMU uses to boot a {@code vmlinux} given to {@code -kernel}.
 */
final class ElfKernel {
    static final int XEN_ELFNOTE_PHYS32_ENTRY = 18;
    private static final int PT_NOTE = 4;

    private ElfKernel() {
    }

    static void verifyPvh(Path vmlinux) throws IOException {
        try (FileChannel ch = FileChannel.open(vmlinux, StandardOpenOption.READ)) {
            ByteBuffer elf = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
            String problem = pvhProblem(elf);
            if (problem != null) {
                throw new KosaException(KosaException.Kind.IMAGE,
                        "the extracted kernel " + vmlinux + " cannot be booted by QEMU's PVH entry: " + problem,
                        "use a kernel built with CONFIG_PVH=y, such as Debian 12's linux-image-amd64");
            }
        }
    }

    /** Why {@code elf} is not a PVH-bootable x86-64 kernel, or null when it is. */
    static String pvhProblem(ByteBuffer elf) {
        ByteBuffer b = elf.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (b.limit() < 64 || b.getInt(0) != 0x464c457f) {
            return "not an ELF file";
        }
        if (b.get(4) != 2 || b.get(5) != 1 || b.getShort(0x12) != 0x3e) {
            return "not a 64-bit little-endian x86-64 ELF file";
        }
        long phoff = b.getLong(0x20);
        int phentsize = Short.toUnsignedInt(b.getShort(0x36));
        int phnum = Short.toUnsignedInt(b.getShort(0x38));
        if (phentsize < 56 || phoff < 0 || phoff + (long) phnum * phentsize > b.limit()) {
            return "its program headers lie outside the file";
        }
        for (int i = 0; i < phnum; i++) {
            int ph = (int) (phoff + (long) i * phentsize);
            if (b.getInt(ph) == PT_NOTE && hasPvhNote(b, b.getLong(ph + 8), b.getLong(ph + 0x20))) {
                return null;
            }
        }
        return "no Xen ELF note of type " + XEN_ELFNOTE_PHYS32_ENTRY + " (XEN_ELFNOTE_PHYS32_ENTRY)";
    }

    private static boolean hasPvhNote(ByteBuffer b, long offset, long size) {
        if (offset < 0 || size < 0 || offset + size > b.limit()) {
            return false;
        }
        long p = offset;
        long end = offset + size;
        while (p + 12 <= end) {
            long namesz = Integer.toUnsignedLong(b.getInt((int) p));
            long descsz = Integer.toUnsignedLong(b.getInt((int) p + 4));
            int type = b.getInt((int) p + 8);
            long name = p + 12;
            long next = name + align4(namesz) + align4(descsz);
            if (next > end) {
                return false;
            }
            if (type == XEN_ELFNOTE_PHYS32_ENTRY && namesz == 4 && "Xen\0".equals(ascii(b, (int) name, 4))) {
                return true;
            }
            p = next;
        }
        return false;
    }

    private static long align4(long n) {
        return (n + 3) & ~3L;
    }

    private static String ascii(ByteBuffer b, int at, int len) {
        byte[] bytes = new byte[len];
        b.get(at, bytes);
        return new String(bytes, StandardCharsets.ISO_8859_1);
    }
}
