package dev.kosa8.agent;

import dev.kosa8.protocol.Ws9p;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The up pump: carries one mount's requests from the kernel's pipe to the
 * workspace's port, whole messages at a time (the port's reader writes
 * Treturns between them), on one platform thread that ends with the mount's
 * connection. After the mount's first message, its Tversion, it asks for the
 * read window if the guest has one (Twindow, {@link ReadWindowReader}).
 *
 * <p>Large writes' data goes past the port, through the write window, a disk
 * the guest writes and the host reads ({@link WriteSlots}): towards the host
 * the port takes at most 32 KiB per write, each piece a copy, a notification
 * and a send in QEMU, so a 1 MiB Twrite was 32 of them. The pump writes a
 * Twrite's data to a free slot with one O_DIRECT pwrite and sends the host a
 * Twritew (the Twrite's header and the slot) instead; the host reads the
 * slot before it answers, so the slot is free again once the answer to that
 * tag comes back. The host's {@code dev.kosa8.workspace.WriteWindow}
 * documents the message.
 *
 * <p>Requests are read to where a Twrite's data starts on a page boundary,
 * so the data of a Twrite that comes first in a read (a writer's next Twrite
 * waits for the answer to the one before) goes to the disk straight from
 * this buffer; O_DIRECT takes aligned memory only, so one that does not is
 * copied to an aligned buffer first.
 *
 * <p>The kernel's Tclunks (a quarter of its requests in metadata work) are
 * answered by the relay itself once the host has said it takes quiet clunks
 * ({@link DownPump} asks): the pump sends the host a Tclunkq, which has no
 * answer, and puts the Rclunk into the replies at once, so the kernel's wait
 * ends in the guest. The host's {@code dev.kosa8.workspace.QuietClunks}
 * documents the exchange.
 */
final class UpPump implements Runnable {
    /**
     * The smallest Twrite whose data goes through the write window: the port
     * takes up to 32 KiB in one piece, so a smaller one crosses it in one
     * write, as cheaply as a block request would.
     */
    private static final int WRITE_THRESHOLD = 32 * 1024;
    private static final int PAGE = 4096;
    /** O_DIRECT writes whole sectors. */
    private static final int SECTOR = 512;

    private final RelayConnection c;
    private final RelayPort port;
    /** The write window's slots; null when the guest has none. */
    private final WriteSlots writes;
    private final int bufferSize;
    /** The CPU taking the port's interrupts; -1 if unknown. */
    private final int cpu;
    /** Whether the Twindow has gone (or need not go). */
    private boolean asked;

    UpPump(RelayConnection c, RelayPort port, WriteSlots writes, boolean askForReadWindow, int bufferSize, int cpu) {
        this.c = c;
        this.port = port;
        this.writes = writes;
        this.asked = !askForReadWindow;
        this.bufferSize = bufferSize;
        this.cpu = cpu;
    }

    /** The up thread's memory: requests, an aligned copy of a Twrite's data, a Twritew, a Twindow, an Rclunk. */
    private record Memory(MemorySegment buf, MemorySegment aligned, MemorySegment twritew, MemorySegment twindow,
            MemorySegment rclunk, RelayScratch scratch) {
    }

    @Override
    public void run() {
        RelayIo.pinRelayThread(cpu);
        try (Arena arena = Arena.ofConfined()) {
            // PAGE - 23 ahead of the buffer, and the sector an O_DIRECT write of its last data rounds up to after it
            MemorySegment whole = arena.allocate(bufferSize + 2L * PAGE, PAGE);
            MemorySegment buf = whole.asSlice(PAGE - Ws9p.TWRITE_HEADER, bufferSize + PAGE);
            Memory up = new Memory(buf, writes == null ? null : arena.allocate(bufferSize + PAGE, PAGE),
                    arena.allocate(Ws9p.TWRITEW_SIZE), arena.allocate(Ws9p.TWINDOW_SIZE), arena.allocate(Ws9p.HEADER),
                    RelayScratch.allocate(arena));
            P9Frames.head(up.rclunk(), Ws9p.HEADER, P9Frames.RCLUNK, 0); // its tag is each Tclunk's
            P9Frames.head(up.twindow(), Ws9p.TWINDOW_SIZE, Ws9p.TWINDOW, Ws9p.NOTAG);
            long have = 0;
            while (true) {
                int n = RelayIo.readSome(c.requests, buf.asSlice(have), bufferSize - have, up.scratch().st());
                if (n < 0 || c.closed) {
                    Log.info("workspace relay: the mount's connection ended");
                    return;
                }
                have += n;
                long ready = P9Frames.wholeMessages(buf, have, bufferSize);
                if (ready == 0) {
                    continue;
                }
                if (!send(ready, up)) {
                    return;
                }
                if (ready < have) {
                    MemorySegment.copy(buf, ready, buf, 0, have - ready);
                }
                have -= ready;
            }
        } catch (RuntimeException e) {
            Log.info("workspace relay (kernel to host) stopped: " + e.getMessage());
        } finally {
            Posix.close(c.requests);
        }
    }

    /**
     * Sends the first {@code length} bytes of the buffer (whole messages,
     * or bytes not framed as 9p) to the port, each large Twrite among them
     * as a Twritew with its data in the write window, and each Tclunk, once
     * the host takes quiet clunks, as a Tclunkq that the relay answers
     * itself. False once the connection is closed.
     */
    private boolean send(long length, Memory up) {
        MemorySegment buf = up.buf();
        long run = 0;
        long off = 0;
        while ((writes != null || c.quiet) && length - off >= Ws9p.HEADER) {
            long size = P9Frames.size(buf, off);
            if (size < Ws9p.HEADER || off + size > length) {
                break; // not framed as 9p: passed on as it is below
            }
            int type = P9Frames.type(buf, off);
            if (type == P9Frames.TCLUNK && size == P9Frames.TCLUNK_SIZE && c.quiet) {
                buf.set(ValueLayout.JAVA_BYTE, off + 4, (byte) Ws9p.TCLUNKQ);
                // the Tclunkq goes before the answer: the kernel may use the fid's number again once it has that
                if (!toPort(buf.asSlice(run, off + size - run), up)) {
                    return false;
                }
                run = off + size;
                up.rclunk().set(P9Frames.LE_SHORT, 5, buf.get(P9Frames.LE_SHORT, off + 5));
                synchronized (c.replying) {
                    if (!c.put(up.rclunk(), false, up.scratch())) {
                        return false;
                    }
                }
            } else if (writes != null && type == P9Frames.TWRITE
                    && size >= Ws9p.TWRITE_HEADER + WRITE_THRESHOLD
                    && Integer.toUnsignedLong(buf.get(P9Frames.LE_INT, off + Ws9p.TWRITEW_COUNT))
                            == size - Ws9p.TWRITE_HEADER) {
                int tag = P9Frames.tag(buf, off);
                int slot = writes.take(tag);
                if (slot >= 0) {
                    if (!toPort(buf.asSlice(run, off - run), up)) {
                        writes.answered(tag);
                        return false;
                    }
                    run = off;
                    if (toWindow(buf, off, size, slot, up)) {
                        MemorySegment w = up.twritew();
                        MemorySegment.copy(buf, off, w, 0, Ws9p.TWRITE_HEADER);
                        w.set(P9Frames.LE_INT, 0, Ws9p.TWRITEW_SIZE);
                        w.set(ValueLayout.JAVA_BYTE, 4, (byte) Ws9p.TWRITEW);
                        w.set(P9Frames.LE_INT, Ws9p.TWRITEW_SLOT, slot);
                        if (!toPort(w, up)) {
                            writes.answered(tag);
                            return false;
                        }
                        run = off + size;
                    } else {
                        writes.answered(tag); // the Twrite goes through the port as it is
                    }
                }
            }
            off += size;
        }
        return toPort(buf.asSlice(run, length - run), up);
    }

    /**
     * Writes a Twrite's data (at {@code off} of the buffer, {@code size} the
     * whole message's) to {@code slot} of the write window, rounded up to
     * whole sectors. False if it could not (logged the first time).
     */
    private boolean toWindow(MemorySegment buf, long off, long size, int slot, Memory up) {
        long count = size - Ws9p.TWRITE_HEADER;
        long sectors = (count + SECTOR - 1) / SECTOR * SECTOR;
        MemorySegment data = buf.asSlice(off + Ws9p.TWRITE_HEADER);
        if (data.address() % SECTOR != 0) {
            MemorySegment.copy(data, 0, up.aligned(), 0, count);
            data = up.aligned();
        }
        try {
            RelayIo.pwriteFully(writes.fd, data, sectors, (long) slot * Ws9p.SLOT_SIZE, up.scratch().st());
            return true;
        } catch (RuntimeException e) {
            if (writes.failures++ == 0) {
                Log.info("workspace relay: cannot write the write window (" + e.getMessage()
                        + "); large writes go through the port");
            }
            return false;
        }
    }

    /** Writes {@code m} to the port, then the Twindow if it is still to go. False once the connection is closed. */
    private boolean toPort(MemorySegment m, Memory up) {
        if (m.byteSize() == 0) {
            return !c.closed;
        }
        if (!port.send(c, m, m.byteSize(), asked ? null : up.twindow(), up.scratch().st())) {
            return false;
        }
        asked = true;
        return true;
    }
}
