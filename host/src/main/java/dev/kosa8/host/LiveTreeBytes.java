package dev.kosa8.host;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * The bytes of the regular files beneath a directory that others change
 * while it is measured: a checkpoint's stream renamed into place, a pause
 * to disk written, a held file replaced. An entry gone between its
 * directory's listing and its own reading counts nothing; it is not an
 * error. ({@code Files.walk} throws there: a {@code kosa8 checkpoint} whose
 * budget check walked the directory while the previous checkpoint's commit
 * renamed its {@code .vmstate.tmp} failed with an internal error.) Links
 * are not followed.
 */
public final class LiveTreeBytes {
    private LiveTreeBytes() {
    }

    /** Every regular file's size (0 when {@code dir} is not there). */
    public static long of(Path dir) throws IOException {
        return of(dir, false);
    }

    /**
     * With {@code aloneOnly}, only files with one name count: a file also
     * linked elsewhere (a template's RAM pages shared with a fork) counts
     * where it was made.
     */
    public static long of(Path dir, boolean aloneOnly) throws IOException {
        return of(dir, aloneOnly, false);
    }

    /**
     * As {@link #of(Path)}, for a tree whose modes a guest sets (a fork's view's own layer): a directory
     * it made unreadable counts nothing, rather than failing the measure.
     */
    public static long ofReadable(Path dir) throws IOException {
        return of(dir, false, true);
    }

    private static long of(Path dir, boolean aloneOnly, boolean skipUnreadable) throws IOException {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return 0;
        }
        long[] bytes = {0};
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes a) throws IOException {
                if (a.isRegularFile() && (!aloneOnly || links(f) == 1)) {
                    bytes[0] += a.size();
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path f, IOException e) throws IOException {
                if (e instanceof NoSuchFileException
                        || (skipUnreadable && e instanceof java.nio.file.AccessDeniedException)) {
                    return FileVisitResult.CONTINUE;
                }
                throw e;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                if (e == null || e instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE;
                }
                throw e;
            }
        });
        return bytes[0];
    }

    /** Its link count; 0 once it is gone, so a vanished file counts nothing. */
    private static int links(Path f) throws IOException {
        try {
            return ((Number) Files.getAttribute(f, "unix:nlink", LinkOption.NOFOLLOW_LINKS)).intValue();
        } catch (NoSuchFileException gone) {
            return 0;
        }
    }
}
