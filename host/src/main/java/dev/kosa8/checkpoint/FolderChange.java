package dev.kosa8.checkpoint;

/**
 * One difference between the folder at an instant (a checkpoint's snapshot, or
 * the sandbox's start) and the folder now: what {@code kosa8 diff} shows.
 *
 * @param path    relative to the folder, for display (bytes that are not UTF-8 escaped, as
 *                {@code ByteNames.display} does)
 * @param change  what kind of difference
 * @param before  the path at the instant; null when added
 * @param after   the path now; null when deleted
 * @param text    a unified diff of the two contents when both are text (no NUL byte, each at most
 *                {@code UnifiedDiff.MAX_BYTES}); null otherwise
 * @param added   lines added, for text; -1 when not compared as text
 * @param removed lines removed, for text; -1 when not compared as text
 */
public record FolderChange(String path, Change change, Side before, Side after, String text, int added,
                           int removed) {

    /** How a path differs. A path whose kind changed (a file became a symlink) is {@link #TYPE}. */
    public enum Change {
        ADDED, DELETED, MODIFIED, MODE, SYMLINK, TYPE
    }

    /**
     * A path as one side has it.
     *
     * @param kind   dir, file, symlink or fifo
     * @param mode   permission bits (setuid, setgid, sticky included)
     * @param size   a file's size; 0 otherwise
     * @param sha256 a file's content hash; null otherwise
     * @param target a symlink's target, for display; null otherwise
     */
    public record Side(String kind, int mode, long size, String sha256, String target) {
        static Side of(Entry e) {
            return e == null ? null : new Side(e.kind().json, e.mode(), e.size(), e.sha256(),
                    e.target() == null ? null : ByteNames.display(e.target()));
        }
    }

    /** Whether the contents were compared as text. */
    public boolean isText() {
        return text != null;
    }
}
