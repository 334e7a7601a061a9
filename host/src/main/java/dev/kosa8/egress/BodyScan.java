package dev.kosa8.egress;

import dev.kosa8.secrets.SentinelDetector;
import io.netty.buffer.ByteBuf;
import java.util.Optional;

/**
 * Looks for misplaced placeholders in a request body as it arrives, piece by piece, so that a body spooled to
 * disk ({@link BodySpool}) is never read back to be judged. Each piece is searched together with the last
 * {@link SentinelDetector#reach()} bytes before it, so a placeholder split across pieces (a chunk boundary, a TLS
 * record, an HTTP/2 DATA frame) is found as it would be in the whole body: raw, base64 or percent-encoded.
 */
final class BodyScan {
    private final SentinelDetector detector;
    private final int reach;
    private byte[] carry = new byte[0];
    private String found;

    /** @param detector what to look for; null: nothing */
    BodyScan(SentinelDetector detector) {
        this.detector = detector;
        this.reach = detector == null ? 0 : detector.reach();
    }

    /** Searches the readable bytes of {@code piece}, which stay unread; after a find, nothing more is searched. */
    void feed(ByteBuf piece) {
        if (detector == null || found != null || !piece.isReadable()) {
            return;
        }
        int n = piece.readableBytes();
        byte[] a = new byte[carry.length + n];
        System.arraycopy(carry, 0, a, 0, carry.length);
        piece.getBytes(piece.readerIndex(), a, carry.length, n);
        found = detector.find(a, a.length).orElse(null);
        int keep = Math.min(reach, a.length);
        carry = java.util.Arrays.copyOfRange(a, a.length - keep, a.length);
    }

    /** The name of the first secret whose placeholder was found, if any. */
    Optional<String> found() {
        return Optional.ofNullable(found);
    }
}
