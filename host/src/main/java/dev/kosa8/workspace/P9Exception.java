package dev.kosa8.workspace;

/**
 * A 9P frame from the guest that cannot be decoded. It says how the server must answer:
 * a non-{@link #fatal()} failure is answered with an Rlerror carrying {@link #errno()} under
 * {@link #tag()}, and the connection carries on, because the frame's size field was sound and the
 * next frame starts where the server expects. A fatal failure means the size field itself is
 * unusable, so there is no way to find the next frame; the only safe answer is to close the
 * connection.
 *
 * <p>Thrown on every decode of hostile input, so it records no stack trace.
 */
final class P9Exception extends Exception {
    /** Invalid argument: a body that does not match its message type. */
    static final int EINVAL = 22;
    /** A string longer than {@link P9Codec#MAX_STRING}. */
    static final int ENAMETOOLONG = 36;
    /** A message type this server does not speak. */
    static final int EPROTO = 71;
    /** A frame larger than the negotiated msize. */
    static final int EMSGSIZE = 90;

    private final int tag;
    private final int errno;
    private final boolean fatal;

    /**
     * @param tag   the frame's tag, or -1 when the header could not be read
     * @param errno the Linux errno to answer with
     * @param fatal whether the framing is broken and the connection must be closed
     */
    P9Exception(String message, int tag, int errno, boolean fatal) {
        super(message, null, false, false);
        this.tag = tag;
        this.errno = errno;
        this.fatal = fatal;
    }

    /** The frame's tag (0..65535), or -1 when even the header was unreadable. */
    int tag() {
        return tag;
    }

    /** The Linux errno to put in the Rlerror. */
    int errno() {
        return errno;
    }

    /** True when the stream cannot be resynchronised and the connection must be closed. */
    boolean fatal() {
        return fatal;
    }
}
