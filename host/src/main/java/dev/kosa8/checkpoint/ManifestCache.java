package dev.kosa8.checkpoint;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Manifests already decoded, by file, for the daemon's life. A rewind reads
 * two of them (the checkpoint's and the folder's head), and decoding one of
 * 10,000 entries (JSON, every name checked, the digest verified) was four
 * fifths of a folder restore's CPU: about 80 of 100 ms here, on a machine
 * whose two cores the restored guest needs at that moment.
 *
 * <p>A committed manifest never changes, but a file can be replaced or
 * damaged behind the daemon's back: an entry is used only while the file is
 * the same one, unchanged since it was decoded (device, inode, size and
 * ctime, which no write or rename leaves as it was, and no one can set
 * back). Least recently used entries go first once the entries of all the
 * manifests held pass {@link #MAX_ENTRIES} (about 250 bytes each).
 */
final class ManifestCache {
    static final int MAX_ENTRIES = 200_000;

    /**
     * Which manifest file, as it is: changed by any write or rename of it. (Not the package's
     * {@link Identity}, which stands for a workspace file's content.)
     */
    record FileKey(Object dev, Object ino, long size, FileTime ctime) {
    }

    private static final class Held {
        final FileKey key;
        final Manifest manifest;
        ManifestIndex index;

        Held(FileKey key, Manifest manifest) {
            this.key = key;
            this.manifest = manifest;
        }
    }

    private static final LinkedHashMap<Path, Held> HELD = new LinkedHashMap<>(16, 0.75f, true);
    private static int entries;

    private ManifestCache() {
    }

    /** The file's key now; throws NoSuchFileException if it is not there. */
    static FileKey key(Path file) throws IOException {
        Map<String, Object> a = Files.readAttributes(file, "unix:dev,ino,size,ctime", LinkOption.NOFOLLOW_LINKS);
        return new FileKey(a.get("dev"), a.get("ino"), (Long) a.get("size"), (FileTime) a.get("ctime"));
    }

    /** The manifest decoded from {@code file} when it had {@code key}; null if none is held. */
    static synchronized Manifest get(Path file, FileKey key) {
        Held h = HELD.get(file);
        return h != null && h.key.equals(key) ? h.manifest : null;
    }

    /** Keeps {@code m}, decoded from (or just written to) {@code file} with {@code key}. */
    static synchronized void put(Path file, FileKey key, Manifest m) {
        int size = m.entries().size();
        Held old = HELD.remove(file);
        if (old != null) {
            entries -= old.manifest.entries().size();
        }
        if (size > MAX_ENTRIES) {
            return;
        }
        HELD.put(file, new Held(key, m));
        entries += size;
        for (Iterator<Held> it = HELD.values().iterator(); entries > MAX_ENTRIES && it.hasNext(); ) {
            entries -= it.next().manifest.entries().size();
            it.remove();
        }
    }

    /**
     * The index of {@code m}, which {@link #get} gave for {@code file}: made once while it is held; made
     * anew each time for a manifest that is not (one too large to hold, or one replaced meanwhile).
     */
    static ManifestIndex index(Path file, Manifest m) {
        synchronized (ManifestCache.class) {
            Held h = HELD.get(file);
            if (h == null || h.manifest != m) {
                return ManifestIndex.of(m);
            }
            if (h.index == null) {
                h.index = ManifestIndex.of(m); // under the lock: made once, even with two restores at once
            }
            return h.index;
        }
    }

    /** Forgets {@code file} (its manifest was deleted). */
    static synchronized void forget(Path file) {
        Held old = HELD.remove(file);
        if (old != null) {
            entries -= old.manifest.entries().size();
        }
    }
}
