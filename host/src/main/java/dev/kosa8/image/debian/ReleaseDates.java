package dev.kosa8.image.debian;

import dev.kosa8.host.AtomicFile;
import dev.kosa8.host.KosaException;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The {@code Date} of the newest signed Release accepted from each mirror
 * and suite, one small file each ({@code DIR/SUITE-HASH}, HASH from the
 * mirror's URL), so that an older one is refused, as apt refuses a Release
 * older than the one it has: a mirror gone back in time, or someone in
 * between replaying an old but validly signed {@code InRelease} (which would
 * hold back security updates without breaking any signature). The memory is
 * per mirror: a mirror never used before starts without one, as with apt.
 */
final class ReleaseDates {
    /** The file in the folder that builds lock while they compare and record a date; it stays, empty. */
    static final String LOCK_FILE = ".lock";
    /** One lock per lock file for this process's threads: an OS file lock does not exclude them from each other. */
    private static final ConcurrentHashMap<Path, ReentrantLock> IN_PROCESS = new ConcurrentHashMap<>();

    private final Path dir;

    ReleaseDates(Path dir) {
        this.dir = dir;
    }

    /**
     * Refuses {@code r} from {@code s} when it is older than one accepted before; else remembers its date. The
     * read, the comparison and the write are one step under {@link #LOCK_FILE} (held by this process's threads one
     * at a time, and by other processes through an OS file lock), so two builds at once never write an older date
     * over a newer one: the recorded date never goes backwards.
     */
    void accept(Source s, ReleaseFile r) {
        Path f = file(s);
        try {
            Files.createDirectories(dir);
            Path lockPath = dir.resolve(LOCK_FILE).toAbsolutePath().normalize();
            ReentrantLock inProcess = IN_PROCESS.computeIfAbsent(lockPath, p -> new ReentrantLock());
            inProcess.lock();
            try (FileChannel ch = FileChannel.open(lockPath, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                 FileLock ignored = ch.lock()) {
                compareAndWrite(s, r, f);
            } finally {
                inProcess.unlock();
            }
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot write " + f + ": " + e.getMessage(),
                    "check that " + dir + " is writable", e);
        }
    }

    private void compareAndWrite(Source s, ReleaseFile r, Path f) throws IOException {
        Optional<Instant> last = last(f);
        if (last.isPresent() && r.date().isBefore(last.get())) {
            throw new KosaException(KosaException.Kind.IMAGE, "refused an old Release from the Debian archive: "
                    + s.suite() + "'s InRelease from " + s.mirror().base() + " is dated " + r.date()
                    + ", older than the one of " + last.get() + " kosa8 already accepted from it (a mirror gone "
                    + "back in time, or an old signed file replayed to hold back updates)",
                    "nothing was installed from it; try again later or use another mirror (KOSA8_DEBIAN_MIRROR); if "
                            + "you pointed kosa8 at an older snapshot of the archive on purpose, delete " + f);
        }
        if (last.isEmpty() || r.date().isAfter(last.get())) {
            AtomicFile.write(f, ("Date: " + r.date() + "\nMirror: " + s.mirror().base() + "\nSuite: " + s.suite()
                    + "\n").getBytes(StandardCharsets.UTF_8));
        }
    }

    /** The file that holds the last date accepted from this mirror and suite. */
    Path file(Source s) {
        byte[] url = s.mirror().base().toString().getBytes(StandardCharsets.UTF_8);
        String hash = HexFormat.of().formatHex(ArchiveHttp.sha256().digest(url)).substring(0, 16);
        return dir.resolve(s.suite().replaceAll("[^A-Za-z0-9._-]", "_") + "-" + hash);
    }

    /** The date in {@code f}; none when it is missing or unreadable (it is written anew then). */
    private static Optional<Instant> last(Path f) {
        try {
            for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                if (line.startsWith("Date: ")) {
                    return Optional.of(Instant.parse(line.substring(6).strip()));
                }
            }
        } catch (IOException | DateTimeParseException e) {
            // missing (never accepted one) or unreadable
        }
        return Optional.empty();
    }
}
