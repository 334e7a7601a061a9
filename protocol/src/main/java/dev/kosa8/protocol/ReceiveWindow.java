package dev.kosa8.protocol;

/**
 * The receiving side of one stream's flow control: counts bytes received and
 * not yet credited back, and refuses a peer that sends beyond its window. This
 * is what keeps an untrusted sender from making the receiver buffer without
 * bound.
 */
public final class ReceiveWindow {
    private final int window;
    private long outstanding;

    /** An exec stream's window, {@link Limits#INITIAL_WINDOW}. */
    public ReceiveWindow() {
        this(Limits.INITIAL_WINDOW);
    }

    /** A window of {@code window} bytes (a network stream's is {@link NetLink#WINDOW}). */
    public ReceiveWindow(int window) {
        if (window <= 0 || window > Limits.INITIAL_WINDOW) {
            throw new IllegalArgumentException("window of " + window + " bytes");
        }
        this.window = window;
    }

    /**
     * Accounts for {@code bytes} just received.
     *
     * @throws ProtocolException if the sender exceeded its window
     */
    public synchronized void received(int bytes) {
        outstanding += bytes;
        if (outstanding > window) {
            throw new ProtocolException("peer sent " + outstanding + " bytes beyond its window of " + window);
        }
    }

    /** Accounts for {@code bytes} consumed; the caller then sends a Credit for them. */
    public synchronized void consumed(int bytes) {
        outstanding -= bytes;
        if (outstanding < 0) {
            throw new IllegalStateException("consumed more than was received");
        }
    }
}
