package dev.kosa8.image;

import org.apache.commons.compress.archivers.ar.ArArchiveEntry;
import org.apache.commons.compress.archivers.ar.ArArchiveOutputStream;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** A {@code .deb} as Debian lays one out: an ar archive of {@code debian-binary} and the data member, for tests. */
final class TestDebs {
    private TestDebs() {
    }

    /** Writes {@code deb} holding {@code data} as its member {@code member} ({@code data.tar}, {@code data.tar.xz}). */
    static Path write(Path deb, String member, byte[] data) throws IOException {
        try (OutputStream out = Files.newOutputStream(deb); ArArchiveOutputStream ar = new ArArchiveOutputStream(out)) {
            byte[] version = "2.0\n".getBytes(StandardCharsets.US_ASCII);
            ar.putArchiveEntry(new ArArchiveEntry("debian-binary", version.length));
            ar.write(version);
            ar.closeArchiveEntry();
            ar.putArchiveEntry(new ArArchiveEntry(member, data.length));
            ar.write(data);
            ar.closeArchiveEntry();
        }
        return deb;
    }
}
