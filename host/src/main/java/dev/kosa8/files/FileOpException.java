package dev.kosa8.files;

import dev.kosa8.protocol.Message;

/**
 * A file operation failed in the guest, or was refused before it got there: {@link #code()} says why, errno-like
 * ({@code NOT_FOUND}, {@code EXISTS}, {@code NOT_DIRECTORY}, {@code INVALID}, {@code PERMISSION}, {@code LIMIT}...),
 * so a caller can map it (the REST API to an HTTP status, docs/api.md "Files"); the message says what happened.
 */
public final class FileOpException extends RuntimeException {
    private final Message.ErrorCode code;

    public FileOpException(Message.ErrorCode code, String message) {
        super(message);
        this.code = code;
    }

    public Message.ErrorCode code() {
        return code;
    }
}
