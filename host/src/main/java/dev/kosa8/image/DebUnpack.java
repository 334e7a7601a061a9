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
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * {@code dpkg-deb -x} in Java, for hosts without dpkg: a {@code .deb} is an
 * {@code ar} archive whose {@code data.tar} (xz, zstd, gzip or plain) holds
 * the files. Directories, regular files (their permission bits, without
 * set-id bits), symbolic and hard links are made under {@code dir}; device
 * nodes and FIFOs, which only an install as root could make, are skipped.
 * Owners are not kept: the files are the user's, as with {@code dpkg-deb -x}
 * run by them.
 *
 * <p>Confinement: an entry's name is made of plain components ({@code ..}
 * is refused), and every folder on the way to it must be a real folder under
 * {@code dir}, never a symbolic link, even one that points inside (one this
 * package or an earlier one made: {@code ./usr/lib/x -> /etc} then
 * {@code ./usr/lib/x/passwd} would write {@code /etc/passwd}); a hard link
 * must name a regular file reached the same way. Files are created new,
 * without following a link.
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

    /** What reads a package's {@code data.tar}, given it as a stream. */
    interface DataReader {
        void read(TarArchiveInputStream tar) throws IOException;
    }

    /**
     * Hands {@code reader} the {@code data.tar} of {@code deb}, decompressed. A failure to read the package is an
     * error naming it; the reader's own failures (writing elsewhere) it throws as {@link java.io.UncheckedIOException},
     * which pass through unchanged.
     */
    static void readData(Path deb, DataReader reader) {
        try (InputStream raw = new BufferedInputStream(Files.newInputStream(deb));
             ArArchiveInputStream ar = new ArArchiveInputStream(raw)) {
            ArArchiveEntry e;
            while ((e = ar.getNextEntry()) != null) {
                if (e.getName().startsWith("data.tar")) {
                    reader.read(new TarArchiveInputStream(decompress(e.getName(), ar)));
                    return;
                }
            }
            throw bad(deb, "it has no data.tar member");
        } catch (IOException e) {
            throw bad(deb, e.toString());
        }
    }

    /** The most a package's {@code control} file may hold here; Debian's largest are a few KiB. */
    static final int MAX_CONTROL = 1 << 20;

    /**
     * The text of {@code deb}'s {@code control} file (its {@code control.tar} member's {@code ./control}), as
     * {@code dpkg-deb -f} reads it: the package's own stanza, at most {@link #MAX_CONTROL} bytes.
     */
    static String control(Path deb) {
        try (InputStream raw = new BufferedInputStream(Files.newInputStream(deb));
             ArArchiveInputStream ar = new ArArchiveInputStream(raw)) {
            ArArchiveEntry e;
            while ((e = ar.getNextEntry()) != null) {
                if (e.getName().startsWith("control.tar")) {
                    TarArchiveInputStream tar = new TarArchiveInputStream(decompress(e.getName(), ar));
                    TarArchiveEntry t;
                    while ((t = tar.getNextEntry()) != null) {
                        if (t.getName().equals("./control") || t.getName().equals("control")) {
                            byte[] text = tar.readNBytes(MAX_CONTROL + 1);
                            if (text.length > MAX_CONTROL) {
                                throw bad(deb, "its control file is over " + MAX_CONTROL + " bytes");
                            }
                            return new String(text, java.nio.charset.StandardCharsets.UTF_8);
                        }
                    }
                    throw bad(deb, "its " + e.getName() + " has no ./control");
                }
            }
            throw bad(deb, "it has no control.tar member");
        } catch (IOException e) {
            throw bad(deb, e.toString());
        }
    }

    private static InputStream decompress(String member, InputStream in) throws IOException {
        String suffix = member.substring(member.indexOf(".tar"));
        return switch (suffix) {
            case ".tar.xz" -> new XZInputStream(in);
            case ".tar.zst" -> new ZstdCompressorInputStream(in);
            case ".tar.gz" -> new GzipCompressorInputStream(in);
            case ".tar" -> in;
            default -> throw new IOException("the compression of " + member + " is not one kosa8 reads");
        };
    }

    private static void untar(InputStream in, Path dir, Path deb) throws IOException {
        Files.createDirectories(dir);
        TarArchiveInputStream tar = new TarArchiveInputStream(in);
        TarArchiveEntry t;
        while ((t = tar.getNextEntry()) != null) {
            List<String> parts = components(t.getName(), deb);
            if (parts.isEmpty()) {
                continue; // "./": the folder itself
            }
            String name = t.getName();
            Path parent = folder(dir, parts.subList(0, parts.size() - 1), name, deb, true);
            Path target = parent.resolve(parts.getLast());
            BasicFileAttributes old = attributes(target);
            if (t.isDirectory()) {
                if (old == null) {
                    Files.createDirectory(target);
                } else if (!old.isDirectory()) {
                    Files.delete(target);
                    Files.createDirectory(target);
                }
                continue;
            }
            if (old != null) {
                Files.delete(target); // a link itself, never what it points to; a non-empty folder fails
            }
            if (t.isSymbolicLink()) {
                Files.createSymbolicLink(target, Path.of(t.getLinkName()));
            } else if (t.isLink()) {
                List<String> to = components(t.getLinkName(), deb);
                Path from = to.isEmpty() ? null : folder(dir, to.subList(0, to.size() - 1), name, deb, false);
                BasicFileAttributes a = from == null ? null : attributes(from.resolve(to.getLast()));
                if (a == null || !a.isRegularFile()) {
                    throw bad(deb, "the hard link " + name + " names " + t.getLinkName()
                            + ", which is not a regular file it unpacked");
                }
                Files.createLink(target, from.resolve(to.getLast()));
            } else if (t.isFile()) {
                try (OutputStream out = Files.newOutputStream(target, StandardOpenOption.CREATE_NEW,
                        StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
                    tar.transferTo(out);
                }
                Files.getFileAttributeView(target, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                        .setPermissions(permissions(t.getMode()));
            }
            // device nodes and FIFOs: skipped (dpkg-deb -x as a user cannot make them either)
        }
    }

    /**
     * The folder under {@code dir} these components name, each one a real folder (made when missing and
     * {@code make}, else null); a symbolic link or a file on the way is refused, naming the entry.
     */
    private static Path folder(Path dir, List<String> parts, String name, Path deb, boolean make)
            throws IOException {
        Path p = dir;
        for (int i = 0; i < parts.size(); i++) {
            p = p.resolve(parts.get(i));
            BasicFileAttributes a = attributes(p);
            String shown = String.join("/", parts.subList(0, i + 1));
            if (a == null) {
                if (!make) {
                    return null;
                }
                Files.createDirectory(p);
            } else if (a.isSymbolicLink()) {
                throw bad(deb, "the entry " + name + " would be written through the symbolic link " + shown
                        + " (kosa8 never follows a link while unpacking, even one that stays inside)");
            } else if (!a.isDirectory()) {
                throw bad(deb, "the entry " + name + " lies under " + shown + ", which is not a folder");
            }
        }
        return p;
    }

    private static BasicFileAttributes attributes(Path p) throws IOException {
        try {
            return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /** An entry's name as components: {@code ./}, a leading {@code /} and empty components dropped. */
    private static List<String> components(String name, Path deb) {
        if (name.indexOf('\0') >= 0) {
            throw bad(deb, "an entry's name holds a NUL");
        }
        List<String> out = new ArrayList<>();
        for (String c : name.split("/")) {
            if (c.equals("..")) {
                throw bad(deb, "the entry " + name + " climbs out of the folder it is unpacked into with '..'");
            }
            if (!c.isEmpty() && !c.equals(".")) {
                out.add(c);
            }
        }
        return out;
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
