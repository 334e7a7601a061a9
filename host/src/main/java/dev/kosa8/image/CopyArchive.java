package dev.kosa8.image;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.util.List;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;

/**
 * A COPY's files as the tar stream the build sandbox unpacks at {@code /}:
 * paths relative to the root, owned by root (a {@code --chown} is applied in
 * the guest, where the image's user names mean something), modes as in the
 * context or {@code --chmod}'s, modification times kept. POSIX (pax) headers,
 * so long names and large files pass.
 */
public final class CopyArchive {
    private CopyArchive() {
    }

    /** Writes {@code entries} to {@code out}; {@code chmod} is empty or the octal mode every entry gets. */
    public static void write(List<BuildContext.Entry> entries, String chmod, OutputStream out) throws IOException {
        int forced = chmod.isEmpty() ? -1 : Integer.parseInt(chmod, 8);
        TarArchiveOutputStream tar = new TarArchiveOutputStream(out, "UTF-8");
        tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
        tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
        for (BuildContext.Entry e : entries) {
            String name = e.destination().replaceFirst("^/+", "");
            TarArchiveEntry t;
            switch (e.type()) {
                case DIRECTORY -> {
                    t = new TarArchiveEntry(name + "/", TarConstants.LF_DIR);
                    t.setMode(TarArchiveEntry.DEFAULT_DIR_MODE & ~0777 | (forced >= 0 ? forced : e.mode()));
                }
                case SYMLINK -> {
                    t = new TarArchiveEntry(name, TarConstants.LF_SYMLINK);
                    t.setLinkName(e.linkTarget());
                    t.setMode(0120777);
                }
                default -> {
                    t = new TarArchiveEntry(name);
                    t.setSize(e.size());
                    t.setMode(0100000 | (forced >= 0 ? forced : e.mode()));
                }
            }
            t.setUserId(0);
            t.setGroupId(0);
            t.setUserName("root");
            t.setGroupName("root");
            t.setModTime(Files.getLastModifiedTime(e.source(), LinkOption.NOFOLLOW_LINKS).toMillis());
            tar.putArchiveEntry(t);
            if (e.type() == BuildContext.Type.FILE) {
                try (InputStream in = Files.newInputStream(e.source(), LinkOption.NOFOLLOW_LINKS)) {
                    long copied = in.transferTo(tar);
                    if (copied != e.size()) {
                        throw new IOException(e.source() + " changed size while it was copied (" + e.size()
                                + " bytes, then " + copied + ")");
                    }
                }
            }
            tar.closeArchiveEntry();
        }
        tar.finish();
    }
}
