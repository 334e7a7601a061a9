package dev.kosa8.e2b;

/**
 * An error of the control plane or of {@code /files}, answered as E2B answers them: the HTTP status and the body
 * {@code {"code": status, "message"}} (the SDK reads {@code code} to tell a missing sandbox from another failure).
 */
final class ApiError extends RuntimeException {
    private final int status;

    ApiError(int status, String message) {
        super(message);
        this.status = status;
    }

    int status() {
        return status;
    }

    static ApiError badRequest(String message) {
        return new ApiError(400, message);
    }

    static ApiError notFound(String message) {
        return new ApiError(404, message);
    }
}
