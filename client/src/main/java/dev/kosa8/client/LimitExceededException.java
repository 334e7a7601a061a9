package dev.kosa8.client;

/** A limit of the sandbox's was reached: its disk budget, its checkpoints, its commands or processes at once. */
public final class LimitExceededException extends Kosa8Exception {
    LimitExceededException(String message, String suggestion, int exitCode) {
        super(Kind.LIMIT, message, suggestion, exitCode, null);
    }
}
