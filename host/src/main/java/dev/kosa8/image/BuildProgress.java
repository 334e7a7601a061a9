package dev.kosa8.image;

/** What an image build tells its caller as it goes; the CLI prints these as lines. */
public interface BuildProgress {

    /** A step is starting. */
    void step(BuildStep step);

    /** A part was found in the cache and is reused as it is. */
    default void reused(String part, String hash) {
    }

    /** Anything else worth a line: waiting for another build, a problem that did not stop this one. */
    default void note(String message) {
    }

    static BuildProgress silent() {
        return step -> {
        };
    }
}
