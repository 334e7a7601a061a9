package dev.kosa8.protocol;

/** A malformed or over-limit message. The peer that sent it is not trusted further. */
public final class ProtocolException extends RuntimeException {
    public ProtocolException(String message) {
        super(message);
    }
}
