package dev.kosa8.image;

import org.apache.commons.compress.archivers.cpio.CpioArchiveEntry;
import org.apache.commons.compress.archivers.cpio.CpioArchiveOutputStream;
import org.apache.commons.compress.archivers.cpio.CpioConstants;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Writes an uncompressed {@code newc} cpio archive, the format the kernel
 * unpacks as an initramfs. The output depends on the entries alone: they are
 * sorted by path, owned by root, dated at the epoch, with inode numbers given
 * in order, so the same inputs always give the same bytes.
 */
final class CpioArchive {

    /** One archive member; paths are relative ({@code bin/busybox}), without a leading slash. */
    sealed interface Entry permits Directory, RegularFile, Symlink, CharDevice {
        String path();

        int permissions();
    }

    record Directory(String path, int permissions) implements Entry {
        Directory {
            checkPath(path);
        }
    }

    record RegularFile(String path, int permissions, byte[] content) implements Entry {
        RegularFile {
            checkPath(path);
        }
    }

    record Symlink(String path, String target) implements Entry {
        Symlink {
            checkPath(path);
        }

        @Override
        public int permissions() {
            return 0777;
        }
    }

    record CharDevice(String path, int permissions, int major, int minor) implements Entry {
        CharDevice {
            checkPath(path);
        }
    }

    private CpioArchive() {
    }

    static void write(List<? extends Entry> entries, OutputStream out) throws IOException {
        List<? extends Entry> sorted = entries.stream().sorted(Comparator.comparing(Entry::path)).toList();
        Set<String> seen = new HashSet<>();
        // The stream's close() would close `out` too; finish() writes the trailer only.
        CpioArchiveOutputStream cpio = new CpioArchiveOutputStream(out, CpioConstants.FORMAT_NEW);
        long inode = 1;
        for (Entry e : sorted) {
            if (!seen.add(e.path())) {
                throw new IllegalArgumentException("duplicate cpio entry " + e.path());
            }
            byte[] data = switch (e) {
                case RegularFile f -> f.content();
                case Symlink s -> s.target().getBytes(StandardCharsets.UTF_8);
                case Directory d -> new byte[0];
                case CharDevice c -> new byte[0];
            };
            CpioArchiveEntry entry = new CpioArchiveEntry(CpioConstants.FORMAT_NEW, e.path(), data.length);
            entry.setMode(type(e) | e.permissions());
            entry.setInode(inode++);
            entry.setNumberOfLinks(e instanceof Directory ? 2 : 1);
            entry.setTime(0);
            entry.setUID(0);
            entry.setGID(0);
            if (e instanceof CharDevice c) {
                entry.setRemoteDeviceMaj(c.major());
                entry.setRemoteDeviceMin(c.minor());
            }
            cpio.putArchiveEntry(entry);
            cpio.write(data);
            cpio.closeArchiveEntry();
        }
        cpio.finish();
        out.flush();
    }

    private static int type(Entry e) {
        return switch (e) {
            case Directory d -> CpioConstants.C_ISDIR;
            case RegularFile f -> CpioConstants.C_ISREG;
            case Symlink s -> CpioConstants.C_ISLNK;
            case CharDevice c -> CpioConstants.C_ISCHR;
        };
    }

    private static void checkPath(String path) {
        if (path.isEmpty() || path.startsWith("/") || path.endsWith("/") || path.contains("//")
                || List.of(path.split("/")).contains("..")) {
            throw new IllegalArgumentException("bad cpio path: " + path);
        }
    }
}
