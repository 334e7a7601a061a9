package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import org.apache.commons.compress.archivers.ar.ArArchiveEntry;
import org.apache.commons.compress.archivers.ar.ArArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.gzip.GzipCompressorInputStream;
import org.apache.commons.compress.compressors.zstandard.ZstdCompressorInputStream;
import org.tukaani.xz.XZInputStream;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;

/**
 * {@code dpkg-deb -x} in Java, for hosts without dpkg: a {@code .deb} is an
 * {@code ar} archive whose {@code data.tar} (xz, zstd, gzip or plain) holds
 * the files. Directories, regular files (their permission bits, without
 * set-id bits), symbolic and hard links are made under {@code dir}; device
 * nodes and FIFOs, which only an install as root could make, are skipped;
 * an entry whose path leaves {@code dir} is refused. Owners are not kept:
 * the files are the user's, as with {@code dpkg-deb -x} run by them.
 */
final class DebUnpack {
    private DebUnpack() {
    }

    static void extract(Path deb, Path dir) {
        try (InputStream raw = new BufferedInputStream(Files.newInputStream(deb));
             ArArchiveInputStream ar = new ArArchiveInputStream(raw)) {
            ArArchiveEntry e;
            while ((e = ar.getNextEntry()) != null) {
                String name = e.getName();
                if (name.startsWith("data.tar")) {
                    untar(decompress(name, ar), dir.toAbsolutePath().normalize(), deb);
                    return;
                }
            }
            throw bad(deb, "it has no data.tar member");
        } catch (IOException e) {
            throw bad(deb, e.toString());
        }
    }

    private static InputStream decompress(String member, InputStream in) throws IOException {
        return switch (member) {
            case "data.tar.xz" -> new XZInputStream(in);
            case "data.tar.zst" -> new ZstdCompressorInputStream(in);
            case "data.tar.gz" -> new GzipCompressorInputStream(in);
            case "data.tar" -> in;
            default -> throw new IOException("the compression of " + member + " is not one kosa8 reads");
        };
    }

    private static void untar(InputStream in, Path dir, Path deb) throws IOException {
        Files.createDirectories(dir);
        TarArchiveInputStream tar = new TarArchiveInputStream(in);
        TarArchiveEntry t;
        while ((t = tar.getNextEntry()) != null) {
            Path target = inside(dir, t.getName(), deb);
            if (t.isDirectory()) {
                Files.createDirectories(target);
                continue;
            }
            Files.createDirectories(target.getParent());
            Files.deleteIfExists(target);
            if (t.isSymbolicLink()) {
                Files.createSymbolicLink(target, Path.of(t.getLinkName()));
            } else if (t.isLink()) {
                Files.createLink(target, inside(dir, t.getLinkName(), deb));
            } else if (t.isFile()) {
                Files.copy(tar, target, StandardCopyOption.REPLACE_EXISTING);
                Files.setPosixFilePermissions(target, permissions(t.getMode()));
            }
            // device nodes and FIFOs: skipped (dpkg-deb -x as a user cannot make them either)
        }
    }

    private static Path inside(Path dir, String name, Path deb) {
        Path p = dir.resolve(name.startsWith("/") ? name.substring(1) : name).normalize();
        if (!p.startsWith(dir)) {
            throw bad(deb, "the entry " + name + " leaves the folder it is unpacked into");
        }
        return p;
    }

    static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> out = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] bits = {PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE,
                PosixFilePermission.OTHERS_READ, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE,
                PosixFilePermission.GROUP_READ, PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE,
                PosixFilePermission.OWNER_READ};
        for (int i = 0; i < bits.length; i++) {
            if ((mode & (1 << i)) != 0) {
                out.add(bits[i]);
            }
        }
        return out;
    }

    private static KosaException bad(Path deb, String why) {
        return new KosaException(KosaException.Kind.IMAGE, "cannot unpack " + deb.getFileName() + ": " + why,
                "delete it from the cache (" + deb.getParent() + ") and run `kosa8 image build` again");
    }
}
