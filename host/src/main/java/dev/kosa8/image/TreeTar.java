package dev.kosa8.image;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * A folder written as a tar whose every entry is owned by root (uid and gid 0), its symbolic links as links, its
 * folders 0755 and its files 0755 or 0644 by their owner's execute bit (never the host user's umask: a umask of
 * 077 would otherwise make the image's {@code /etc} root's alone), each dated now: how the host hands the builder
 * VM files that must be root's in the image without ever owning them as root itself ({@link VmRootfs}). Entries
 * are in name order.
 */
final class TreeTar {
    private TreeTar() {
    }

    static void write(Path dir, Path tar) throws IOException {
        List<Path> all;
        try (Stream<Path> walk = Files.walk(dir)) {
            all = walk.filter(p -> !p.equals(dir)).sorted().toList();
        }
        java.util.Date now = new java.util.Date();
        try (OutputStream file = new BufferedOutputStream(Files.newOutputStream(tar), 1 << 16);
             TarArchiveOutputStream out = new TarArchiveOutputStream(file)) {
            out.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            out.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
            for (Path p : all) {
                String name = dir.relativize(p).toString().replace(java.io.File.separatorChar, '/');
                TarArchiveEntry e;
                if (Files.isSymbolicLink(p)) {
                    e = new TarArchiveEntry(name, TarConstants.LF_SYMLINK);
                    e.setLinkName(Files.readSymbolicLink(p).toString());
                    e.setMode(0120777);
                } else if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    e = new TarArchiveEntry(name + "/", TarConstants.LF_DIR);
                    e.setMode(040755);
                } else {
                    e = new TarArchiveEntry(name);
                    e.setSize(Files.size(p));
                    e.setMode(0100000 | (executable(p) ? 0755 : 0644));
                }
                e.setIds(0, 0);
                e.setNames("root", "root");
                e.setModTime(now);
                out.putArchiveEntry(e);
                if (!e.isDirectory() && !e.isSymbolicLink()) {
                    try (InputStream in = Files.newInputStream(p, LinkOption.NOFOLLOW_LINKS)) {
                        in.transferTo(out);
                    }
                }
                out.closeArchiveEntry();
            }
            out.finish();
        }
    }

    private static boolean executable(Path p) throws IOException {
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS);
        return perms.contains(PosixFilePermission.OWNER_EXECUTE);
    }
}
