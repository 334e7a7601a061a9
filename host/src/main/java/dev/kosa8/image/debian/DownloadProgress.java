package dev.kosa8.image.debian;

/** What the archive client tells its caller while it downloads. */
public interface DownloadProgress {
    /** {@code done} of {@code total} bytes of {@code what} are in; called at most every few hundred KB. */
    void downloaded(String what, long done, long total);

    /** One file of {@code count} starts (or was found in the cache). */
    default void file(int index, int count, String what, boolean cached) {
    }

    /** A line for the user, like a damaged cached file that is downloaded again. */
    default void note(String line) {
    }

    static DownloadProgress silent() {
        return (what, done, total) -> {
        };
    }
}
