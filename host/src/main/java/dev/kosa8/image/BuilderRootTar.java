package dev.kosa8.image;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The builder VM's own Debian as one uncompressed tar: the {@code data.tar} of each of its packages, in order,
 * decompressed here and written on, so the guest unpacks it with one {@code tar -x} instead of an xz decoder
 * and a {@code dpkg-deb} per package under emulation. Documentation (manual pages, {@code doc}, {@code info},
 * translations) is left out: nothing in the builder reads it. Nothing is configured, as with
 * {@code dpkg-deb -x}: the builder only runs mmdebstrap, which needs none of the packages' scripts.
 */
final class BuilderRootTar {
    private static final List<String> LEFT_OUT = List.of("./usr/share/doc/", "./usr/share/man/",
            "./usr/share/info/", "./usr/share/locale/");

    private BuilderRootTar() {
    }

    static void write(List<Path> debs, Path tar) throws IOException {
        try (OutputStream file = new BufferedOutputStream(Files.newOutputStream(tar), 1 << 16);
             TarArchiveOutputStream out = new TarArchiveOutputStream(file)) {
            out.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
            out.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
            for (Path deb : debs) {
                DebUnpack.readData(deb, in -> {
                    TarArchiveEntry e;
                    while ((e = in.getNextEntry()) != null) {
                        String name = e.getName().startsWith("./") ? e.getName() : "./" + e.getName();
                        if (LEFT_OUT.stream().anyMatch(name::startsWith)) {
                            continue;
                        }
                        try {
                            out.putArchiveEntry(e);
                            if (e.getSize() > 0) { // a file's bytes; links and folders have none
                                in.transferTo(out);
                            }
                            out.closeArchiveEntry();
                        } catch (IOException writing) {
                            throw new UncheckedIOException(writing); // this host's disk, not the package
                        }
                    }
                });
            }
            out.finish();
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }
}
