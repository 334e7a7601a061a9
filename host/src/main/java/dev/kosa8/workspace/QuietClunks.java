package dev.kosa8.workspace;

import dev.kosa8.protocol.Ws9p;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Quiet clunks: the guest's relay answers the kernel's Tclunks itself and
 * tells the server with a message that has no answer.
 *
 * <p>Why: a quarter of every metadata workload's requests are Tclunks (a
 * {@code stat} is a Twalk, two Tgetattrs and a Tclunk; so are create,
 * delete, {@code git status} and {@code tar x}, counted with the guest's
 * 9p trace events: bench/history/workspace.md, run 7). A Tclunk cannot fail in a
 * way the guest acts on (Linux drops the fid whatever the answer), yet the
 * process that let go of the fid (the end of a lookup, a close) waited for
 * a round trip through the port, QEMU, the server and the port's interrupt.
 * Answered by the relay, that wait ends inside the guest.
 *
 * <p>The exchange, framed as 9p messages outside 9P2000.L's range ({@link Ws9p}
 * defines their numbers and layouts):
 * <ul>
 *   <li>{@code Tquiet} (relay to server, once per mount, after the mount's
 *       Rversion passed the relay). A server that knows quiet clunks answers
 *       {@code Rquiet}; one from before them answers an Rlerror for NOTAG,
 *       as for any type it does not know. The relay takes either answer for
 *       itself (the kernel has no request under NOTAG once its Tversion is
 *       answered) and sends Tclunkqs only after an Rquiet.</li>
 *   <li>{@code Tclunkq} (relay to server), in place of a Tclunk it has
 *       answered: the Tclunk with its type changed. Never answered. The
 *       reader takes the fid out of the table at once, in the order the
 *       guest sent it, so a request that comes after it may use the fid's
 *       number again, as the kernel does as soon as it has its answer; the
 *       fid's descriptor is closed on a worker (it waits for any request
 *       still using it).</li>
 * </ul>
 *
 * <p>For checkpoints: a Tclunkq still on its way to the server at a
 * checkpoint's instant (the guest's process has its answer and may be
 * frozen) leaves the fid in the snapshot that the guest's kernel thinks
 * gone. A restored fid is therefore replaced, not refused, when the guest
 * names it as a new fid ({@link Fid#restored}): the kernel never does that
 * with a fid it still holds.
 *
 * <p>Security: the guest could always clunk its own fids; a Tclunkq of a
 * fid that does not exist, or one that does not fit its size, changes
 * nothing and is counted, and the server's state stays bounded as before.
 */
final class QuietClunks {
    private QuietClunks() {
    }

    /** The answer to a Tquiet, written into a new buffer (its position at the end, as a reply's before it is sent). */
    static ByteBuffer rquiet() {
        return ByteBuffer.allocate(Ws9p.RQUIET_SIZE).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(Ws9p.RQUIET_SIZE).put((byte) Ws9p.RQUIET).putShort((short) Ws9p.NOTAG);
    }
}
