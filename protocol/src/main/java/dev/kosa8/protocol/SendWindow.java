package dev.kosa8.protocol;

/**
 * The sending side of one stream's flow control: how many bytes may still be
 * sent before the receiver credits some back. A sender takes window before it
 * sends a {@link Message.Data} and blocks while there is none.
 */
public final class SendWindow {
    private final int window;
    private long available;
    private boolean closed;

    /** An exec stream's window, {@link Limits#INITIAL_WINDOW}. */
    public SendWindow() {
        this(Limits.INITIAL_WINDOW);
    }

    /** A window of {@code window} bytes (a network stream's is {@link NetLink#WINDOW}). */
    public SendWindow(int window) {
        if (window <= 0 || window > Limits.INITIAL_WINDOW) {
            throw new IllegalArgumentException("window of " + window + " bytes");
        }
        this.window = window;
        this.available = window;
    }

    /**
     * Takes up to {@code wanted} bytes of window, waiting while none is left.
     *
     * @return the bytes granted (at least 1), or -1 once the window is closed
     */
    public synchronized int acquire(int wanted) throws InterruptedException {
        while (available <= 0 && !closed) {
            wait();
        }
        if (closed) {
            return -1;
        }
        int n = (int) Math.min(wanted, available);
        available -= n;
        return n;
    }

    /**
     * Returns window credited by the receiver.
     *
     * @throws ProtocolException if the receiver credits more than was ever sent
     */
    public synchronized void credit(int bytes) {
        if (bytes < 0 || available + bytes > window) {
            throw new ProtocolException("credit of " + bytes + " bytes exceeds what was sent");
        }
        available += bytes;
        notifyAll();
    }

    /** Wakes every waiting sender; later acquires return -1. */
    public synchronized void close() {
        closed = true;
        notifyAll();
    }
}
