package dev.kosa8.client;

/**
 * A file operation in the sandbox failed: {@link #code()} says how, errno-like ({@code NOT_FOUND},
 * {@code EXISTS}, {@code NOT_EMPTY}, {@code NOT_DIRECTORY}, {@code IS_DIRECTORY}, {@code INVALID},
 * {@code TOO_LONG}, {@code PERMISSION}, {@code LIMIT}, {@code NO_SPACE}, {@code RESOURCES}, {@code INTERNAL};
 * docs/api.md, "Files").
 */
public final class SandboxFileException extends Kosa8Exception {
    private final String code;

    SandboxFileException(String code, String message, String suggestion) {
        super(code.equals("LIMIT") ? Kind.LIMIT : Kind.USAGE, message, suggestion,
                (code.equals("LIMIT") ? Kind.LIMIT : Kind.USAGE).exitCode(), null);
        this.code = code;
    }

    public String code() {
        return code;
    }

    /** True when the path (or a directory on the way to it) does not exist. */
    public boolean notFound() {
        return code.equals("NOT_FOUND");
    }
}
