package dev.kosa8.e2b;

import java.util.Locale;

/**
 * A Connect RPC error (https://connectrpc.com/docs/protocol#error-codes): its code, as the SDK maps it to its own
 * error types (not_found to {@code NotFoundError}, invalid_argument to {@code InvalidArgumentError}...), and a
 * message that says what happened. Thrown by the envd services; answered as a unary error body or a stream's
 * end message.
 */
final class ConnectError extends RuntimeException {
    /** The codes this listener answers with, each with the HTTP status a unary answer carries. */
    enum Code {
        CANCELED(499), UNKNOWN(500), INVALID_ARGUMENT(400), DEADLINE_EXCEEDED(504), NOT_FOUND(404),
        ALREADY_EXISTS(409), PERMISSION_DENIED(403), RESOURCE_EXHAUSTED(429), FAILED_PRECONDITION(400),
        ABORTED(409), OUT_OF_RANGE(400), UNIMPLEMENTED(501), INTERNAL(500), UNAVAILABLE(503), DATA_LOSS(500),
        UNAUTHENTICATED(401);

        final int httpStatus;

        Code(int httpStatus) {
            this.httpStatus = httpStatus;
        }

        /** The name on the wire: {@code not_found}. */
        String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Code code;

    ConnectError(Code code, String message) {
        super(message);
        this.code = code;
    }

    Code code() {
        return code;
    }

    static ConnectError invalid(String message) {
        return new ConnectError(Code.INVALID_ARGUMENT, message);
    }

    static ConnectError notFound(String message) {
        return new ConnectError(Code.NOT_FOUND, message);
    }
}
