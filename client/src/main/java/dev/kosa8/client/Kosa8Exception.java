package dev.kosa8.client;

/**
 * A failure the daemon reported, or the daemon could not be reached: what
 * happened ({@link #getMessage()}) and what to do about it
 * ({@link #suggestion()}). Catch a subclass for one kind of failure:
 * {@link InvalidRequestException}, {@link SandboxStateException},
 * {@link LimitExceededException}, {@link DaemonUnavailableException},
 * {@link CommandNotStartedException}.
 */
public class Kosa8Exception extends RuntimeException {
    /** What kind of failure it was; the same kinds, with the same exit codes, as the kosa8 CLI's. */
    public enum Kind {
        /** Bad input: an unknown sandbox, a bad value. */
        USAGE(2),
        /** The operation is invalid in the sandbox's current state. */
        STATE(3),
        /** A host tool or package is missing or broken. */
        HOST(4),
        /** An image could not be built or found. */
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

        /** The exit code the kosa8 CLI ends with for this kind. */
        public int exitCode() {
            return exitCode;
        }

        static Kind parse(String name) {
            for (Kind k : values()) {
                if (k.name().equals(name)) {
                    return k;
                }
            }
            return INTERNAL;
        }
    }

    private final Kind kind;
    private final String suggestion;
    private final int exitCode;

    Kosa8Exception(Kind kind, String message, String suggestion, int exitCode, Throwable cause) {
        super(message, cause);
        this.kind = kind;
        this.suggestion = suggestion == null ? "" : suggestion;
        this.exitCode = exitCode;
    }

    /** The exception of the daemon's error answer: {@code status} and its {@code kind}, {@code error}, {@code suggestion}. */
    static Kosa8Exception fromAnswer(int status, String kindName, String message, String suggestion, int exitCode,
                                     String fileCode) {
        if (kindName.equals("FILE") && !fileCode.isEmpty()) {
            return new SandboxFileException(fileCode, message.isEmpty() ? fileCode : message, suggestion);
        }
        Kind kind = Kind.parse(kindName.isEmpty() ? "INTERNAL" : kindName);
        String m = message.isEmpty() ? "the daemon answered HTTP " + status : message;
        int code = exitCode > 0 ? exitCode : kind.exitCode();
        return switch (kind) {
            case USAGE -> new InvalidRequestException(m, suggestion, code);
            case STATE -> new SandboxStateException(m, suggestion, code);
            case LIMIT -> new LimitExceededException(m, suggestion, code);
            case DAEMON -> new DaemonUnavailableException(m, suggestion, null);
            default -> new Kosa8Exception(kind, m, suggestion, code, null);
        };
    }

    public Kind kind() {
        return kind;
    }

    /** What to do next; empty when there is nothing useful to say. */
    public String suggestion() {
        return suggestion;
    }

    /** The exit code the kosa8 CLI ends with for this failure. */
    public int exitCode() {
        return exitCode;
    }
}
