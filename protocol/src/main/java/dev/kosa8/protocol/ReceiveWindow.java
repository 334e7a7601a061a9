package dev.kosa8.protocol;

/**
 * The receiving side of one stream's flow control: counts bytes received and
 * not yet credited back, and refuses a peer that sends beyond its window. This
 * is what keeps an untrusted sender from making the receiver buffer without
 * bound.
 */
public final class ReceiveWindow {
    private long outstanding;

    /**
     * Accounts for {@code bytes} just received.
     *
     * @throws ProtocolException if the sender exceeded its window
     */
    public synchronized void received(int bytes) {
        outstanding += bytes;
        if (outstanding > Limits.INITIAL_WINDOW) {
            throw new ProtocolException("peer sent " + outstanding + " bytes beyond its window of " + Limits.INITIAL_WINDOW);
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
