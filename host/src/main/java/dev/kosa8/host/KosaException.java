package dev.kosa8.host;

/**
 * The one exception type for failures a user must see: what happened, and what
 * to do about it. The CLI prints it in one place as one line plus the
 * suggestion, with the stack trace only under {@code --debug}.
 */
public final class KosaException extends RuntimeException {
    /** Exit codes are part of the CLI's contract; see docs/cli.md. */
    public enum Kind {
        /** Bad input from the user: unknown sandbox, bad flag value. */
        USAGE(2),
        /** The operation is invalid in the sandbox's current state. */
        STATE(3),
        /** A host tool or package is missing or broken. */
        HOST(4),
        /** The guest image could not be built. */
        IMAGE(5),
        /** The VM or its agent failed. */
        VM(6),
        /** The daemon could not be reached or failed. */
        DAEMON(7),
        /** A limit of the sandbox's was reached: its disk budget, its checkpoints, its commands at once. */
        LIMIT(8),
        /** Anything else. */
        INTERNAL(70);

        private final int exitCode;

        Kind(int exitCode) {
            this.exitCode = exitCode;
        }

        public int exitCode() {
            return exitCode;
        }
    }

    private final Kind kind;
    private final String suggestion;
    private final int exitCode;

    public KosaException(Kind kind, String message, String suggestion) {
        this(kind, message, suggestion, null);
    }

    public KosaException(Kind kind, String message, String suggestion, Throwable cause) {
        this(kind, message, suggestion, cause, kind.exitCode());
    }

    private KosaException(Kind kind, String message, String suggestion, Throwable cause, int exitCode) {
        super(message, cause);
        this.kind = kind;
        this.suggestion = suggestion == null ? "" : suggestion;
        this.exitCode = exitCode;
    }

    /** A failure whose exit code is fixed by convention, such as 127 for a command that was not found. */
    public static KosaException withExitCode(Kind kind, String message, String suggestion, int exitCode) {
        return new KosaException(kind, message, suggestion, null, exitCode);
    }

    public Kind kind() {
        return kind;
    }

    /** What the user should do next; empty when there is nothing useful to say. */
    public String suggestion() {
        return suggestion;
    }

    public int exitCode() {
        return exitCode;
    }
}
