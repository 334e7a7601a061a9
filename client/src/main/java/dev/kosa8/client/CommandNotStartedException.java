package dev.kosa8.client;

/**
 * The command could not be started in the sandbox: no such program
 * ({@link #exitCode()} 127, as a shell says) or one it may not run (126).
 */
public final class CommandNotStartedException extends Kosa8Exception {
    CommandNotStartedException(Kind kind, String message, String suggestion, int exitCode) {
        super(kind, message, suggestion, exitCode, null);
    }
}
