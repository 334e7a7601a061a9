package dev.kosa8.agent;

import dev.kosa8.protocol.Ws9p;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Turns each Rreadw the host sends into the Rread it stands for. Large
 * reads' data comes through the read window, a read-only disk, not through
 * the port (which hands the guest 4 KiB per read): the host sends an Rreadw
 * naming a slot of the window ({@link Ws9p} has its layout), this reads the
 * slot with one O_DIRECT pread, tells the host it may use the slot again
 * (Treturn), and gives the kernel the plain Rread. The relay asks for this
 * once per mount, with a Twindow after the mount's Tversion ({@link UpPump}),
 * and only if it could open the disk. The host's
 * {@code dev.kosa8.workspace.ReadWindow} says more.
 *
 * <p>The data is read into a ring of buffers and spliced from there into
 * the replies (the pipe then refers to the buffer, and the kernel copies it
 * once), but only into a buffer the kernel has read everything spliced from
 * before; else it is read into a spare buffer and copied.
 *
 * <p>The port's reader's ({@link DownPump}) alone: made, and its memory
 * allocated, on that thread.
 */
final class ReadWindowReader {
    /**
     * How many Rreads' data the pipe of replies may refer to at once: the
     * kernel reads each as soon as it is there, so a buffer comes round again
     * long after it was read; one that has not is copied instead.
     */
    static final int RING = 4;
    /** O_DIRECT reads whole sectors. */
    private static final int SECTOR = 512;

    private final RelayPort port;
    /** The read window's disk, opened O_DIRECT; -1 when the guest has none. */
    private final int windowFd;
    private final MemorySegment[] ring = new MemorySegment[RING];
    /** Where in the replies of {@link #ringOwner} the data of each ring buffer ends; 0 for none. */
    private final long[] ends = new long[RING];
    /** For data that cannot be spliced from the ring: copied. */
    private final MemorySegment spare;
    private final MemorySegment treturn;
    private final MemorySegment header;
    /** Room for FIONREAD's int. */
    private final MemorySegment unreadRoom;
    private RelayConnection ringOwner;
    private int next;
    /** Messages that could not be read from the window; logged the first time. */
    private int failures;

    ReadWindowReader(RelayPort port, int windowFd, int bufferSize, Arena arena) {
        this.port = port;
        this.windowFd = windowFd;
        for (int i = 0; i < RING; i++) {
            ring[i] = arena.allocate(bufferSize, 4096);
        }
        this.spare = arena.allocate(bufferSize, 4096);
        this.treturn = arena.allocate(Ws9p.TRETURN_SIZE);
        this.header = arena.allocate(P9Frames.RREAD_HEADER);
        this.unreadRoom = arena.allocate(4, 4);
    }

    /**
     * Reads the data of Rreadw {@code m} from its slot of the window, gives
     * the slot back, and hands {@code to} (if not null) the Rread, or, if the
     * window cannot be read, an Rlerror EIO for that tag: the kernel's read
     * fails, nothing hangs.
     */
    void answer(MemorySegment m, RelayConnection to, RelayScratch scratch) {
        int tag = P9Frames.tag(m, 0);
        long count = Integer.toUnsignedLong(m.get(P9Frames.LE_INT, Ws9p.RREADW_COUNT));
        long slot = Integer.toUnsignedLong(m.get(P9Frames.LE_INT, Ws9p.RREADW_SLOT));
        boolean read = false;
        int ringIndex = -1;
        if (to != null) {
            synchronized (to.replying) {
                ringIndex = freeRingBuffer(to, scratch);
            }
        }
        MemorySegment data = ringIndex < 0 ? spare : ring[ringIndex];
        if (to != null && windowFd >= 0 && count <= Math.min(data.byteSize(), Ws9p.SLOT_SIZE)) {
            try {
                long sectors = (count + SECTOR - 1) / SECTOR * SECTOR;
                RelayIo.preadFully(windowFd, data, sectors, slot * Ws9p.SLOT_SIZE, scratch.st());
                read = true;
            } catch (RuntimeException e) {
                if (failures++ == 0) {
                    Log.info("workspace relay: cannot read the read window (" + e.getMessage() + "); the read fails");
                }
            }
        }
        giveBack(m, scratch);
        if (to == null) {
            return;
        }
        MemorySegment h = header;
        synchronized (to.replying) { // the header and its data together: the up pump puts Rclunks
            if (read) {
                P9Frames.head(h, P9Frames.RREAD_HEADER + count, P9Frames.RREAD, tag);
                h.set(P9Frames.LE_INT, Ws9p.HEADER, (int) count);
                if (to.put(h, false, scratch) && to.put(data.asSlice(0, count), ringIndex >= 0, scratch)
                        && ringIndex >= 0) {
                    ends[ringIndex] = to.written;
                }
            } else {
                P9Frames.head(h, P9Frames.RREAD_HEADER, P9Frames.RLERROR, tag);
                h.set(P9Frames.LE_INT, Ws9p.HEADER, Libc.EIO);
                to.put(h, false, scratch);
            }
        }
    }

    /**
     * The ring's next buffer if the kernel has read everything spliced from
     * it into {@code to}'s replies (the pipe still refers to it until then),
     * else -1. Call holding {@code to.replying}: what the pipe holds and
     * what went into it are read together.
     */
    private int freeRingBuffer(RelayConnection to, RelayScratch scratch) {
        int i = next;
        if (ringOwner != to) {
            ringOwner = to; // a new connection: the old pipe is read no more, whatever it refers to
            Arrays.fill(ends, 0);
        } else if (ends[i] > 0) {
            try {
                long consumed = to.written - RelayIo.unread(to.replies, unreadRoom, scratch.st());
                if (consumed < ends[i]) {
                    return -1;
                }
            } catch (RuntimeException e) {
                return -1; // detached meanwhile
            }
        }
        next = (i + 1) % RING;
        ends[i] = 0;
        return i;
    }

    /** Treturn: the slot of Rreadw {@code m} may be written again. */
    private void giveBack(MemorySegment m, RelayScratch scratch) {
        MemorySegment r = treturn;
        P9Frames.head(r, Ws9p.TRETURN_SIZE, Ws9p.TRETURN, Ws9p.NOTAG);
        r.set(P9Frames.LE_INT, Ws9p.TRETURN_SLOT, m.get(P9Frames.LE_INT, Ws9p.RREADW_SLOT));
        r.set(P9Frames.LE_INT, Ws9p.TRETURN_SERIAL, m.get(P9Frames.LE_INT, Ws9p.RREADW_SERIAL));
        port.sendOwn(r, Ws9p.TRETURN_SIZE, scratch.st());
    }
}
