package dev.kosa8.client;

/** The sandbox is not in a state for this: not running, already stopped, a process that has ended. */
public final class SandboxStateException extends Kosa8Exception {
    SandboxStateException(String message, String suggestion, int exitCode) {
        super(Kind.STATE, message, suggestion, exitCode, null);
    }
}
