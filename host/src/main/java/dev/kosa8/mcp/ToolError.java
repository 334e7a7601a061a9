package dev.kosa8.mcp;

/**
 * A tool call the server refuses before it reaches the daemon: an argument missing, of the wrong type, past a
 * bound, a path that leaves its root, a policy change not allowed. The message says what was wrong, the
 * suggestion what to send instead; both reach the client as the tool's error result.
 */
public final class ToolError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String suggestion;

    public ToolError(String message, String suggestion) {
        super(message);
        this.suggestion = suggestion == null ? "" : suggestion;
    }

    public String suggestion() {
        return suggestion;
    }
}
