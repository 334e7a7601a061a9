package dev.kosa8.client;

/** Bad input: an unknown sandbox or checkpoint, a bad value, a path the sandbox does not have. */
public final class InvalidRequestException extends Kosa8Exception {
    InvalidRequestException(String message, String suggestion, int exitCode) {
        super(Kind.USAGE, message, suggestion, exitCode, null);
    }
}
