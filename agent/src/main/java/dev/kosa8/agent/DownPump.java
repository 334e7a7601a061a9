package dev.kosa8.agent;

import dev.kosa8.protocol.Ws9p;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The down pump: carries what the host sends on the workspace's port to the
 * current mount's kernel, on one platform thread for the agent's lifetime
 * (nothing the host sends or a mount does ends it). On the way it turns each
 * Rreadw into its Rread ({@link ReadWindowReader}), frees the write window's
 * slot of each answered tag ({@link WriteSlots}), asks the host whether it
 * takes quiet clunks once a mount's Rversion passes and keeps the answer to
 * itself, and drops what answers a detached mount ({@link CurrentMount}).
 *
 * <p>The port hands the guest at most one page per read (virtio-console's
 * receive buffers are pages, and QEMU's chardev moves 4 KiB at a time), so
 * a 1 MiB reply arrives in 256 pieces. Passing each piece on would wake the
 * kernel's 9p reader 256 times; instead whole 9p messages are gathered in
 * one buffer of native memory as large as a message (the first 4 bytes of
 * each are its size) and written to the kernel in one go.
 *
 * <p>Quiet clunks (the host's {@code dev.kosa8.workspace.QuietClunks}
 * documents the exchange): the relay asks (Tquiet) when the mount's Rversion
 * passes, before the kernel has it and so before any request of the mount,
 * and takes the host's answer, Rquiet or, from a host from before quiet
 * clunks, Rlerror, for itself; {@link UpPump} then answers the kernel's
 * Tclunks.
 */
final class DownPump implements Runnable {
    private final RelayPort port;
    private final CurrentMount mount;
    /** The write window's slots; null when the guest has none. */
    private final WriteSlots writes;
    /** The read window's disk; -1 when the guest has none. */
    private final int readWindow;
    private final int bufferSize;
    /** The CPU taking the port's interrupts; -1 if unknown. */
    private final int cpu;

    DownPump(RelayPort port, CurrentMount mount, WriteSlots writes, int readWindow, int bufferSize, int cpu) {
        this.port = port;
        this.mount = mount;
        this.writes = writes;
        this.readWindow = readWindow;
        this.bufferSize = bufferSize;
        this.cpu = cpu;
    }

    /** The down thread's memory besides its buffer: its scratch, a Tquiet, and the read window's reader. */
    private record Memory(RelayScratch scratch, MemorySegment tquiet, ReadWindowReader window) {
    }

    @Override
    public void run() {
        RelayIo.pinRelayThread(cpu);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(bufferSize, 4096);
            Memory memory = new Memory(RelayScratch.allocate(arena), arena.allocate(Ws9p.TQUIET_SIZE),
                    new ReadWindowReader(port, readWindow, bufferSize, arena));
            long have = 0;
            while (true) {
                int n = port.read(buf.asSlice(have), bufferSize - have, memory.scratch().st());
                if (n < 0) {
                    // no host connected to the port right now: wait for the server to come back; a part
                    // of a message from the one that went away must not be glued to the next one's
                    have = 0;
                    Thread.sleep(20);
                    continue;
                }
                have += n;
                long whole = P9Frames.wholeMessages(buf, have, bufferSize);
                if (whole == 0) {
                    continue;
                }
                deliver(buf, whole, memory);
                if (whole < have) {
                    MemorySegment.copy(buf, whole, buf, 0, have - whole);
                }
                have -= whole;
            }
        } catch (RuntimeException e) {
            Log.info("workspace relay (host to kernel) stopped: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Writes the first {@code length} bytes of {@code buf} (whole messages)
     * to the current mount, or drops them; an Rreadw among them becomes the
     * Rread it stands for, its slot given back either way.
     */
    private void deliver(MemorySegment buf, long length, Memory memory) {
        RelayConnection to = mount.forDelivery();
        long from = 0;
        if (mount.awaitingVersion()) {
            long version = P9Frames.firstRversion(buf, length);
            from = version < 0 ? length : version;
            pass(buf, 0, from, null, memory); // answers to the old mount: dropped, but the window's slots go back
            if (version < 0) {
                return;
            }
            mount.versionCame();
        }
        pass(buf, from, length, to, memory);
    }

    /**
     * Writes bytes {@code from} to {@code length} of {@code buf} to {@code to}
     * (or drops them, when null), each Rreadw among them turned into its Rread
     * (without a mount, only its slot given back), and the write window's
     * slot of each answered tag freed.
     */
    private void pass(MemorySegment buf, long from, long length, RelayConnection to, Memory memory) {
        long run = from;
        long off = from;
        while (length - off >= Ws9p.HEADER) {
            long size = P9Frames.size(buf, off);
            if (size < Ws9p.HEADER || off + size > length) {
                break; // not framed as 9p: passed on as it is below
            }
            int tag = P9Frames.tag(buf, off);
            if (writes != null) {
                writes.answered(tag); // the host has read that tag's slot, if any
            }
            int type = P9Frames.type(buf, off);
            if (type == Ws9p.RREADW && size == Ws9p.RREADW_SIZE) {
                put(to, buf.asSlice(run, off - run), memory);
                memory.window().answer(buf.asSlice(off, size), to, memory.scratch());
                run = off + size;
            } else if (tag == Ws9p.NOTAG && to != null && to.quietAsked == 1
                    && (type == Ws9p.RQUIET || type == P9Frames.RLERROR)) {
                // the answer to this mount's Tquiet, the relay's own: an Rlerror is a host from before quiet clunks
                put(to, buf.asSlice(run, off - run), memory);
                run = off + size;
                to.quietAsked = 2;
                to.quiet = type == Ws9p.RQUIET && size == Ws9p.RQUIET_SIZE;
                Log.info(to.quiet ? "workspace relay: the host takes quiet clunks; the relay answers Tclunks"
                        : "workspace relay: the host does not take quiet clunks; Tclunks go to it as they are");
            } else if (type == P9Frames.RVERSION && tag == Ws9p.NOTAG && to != null && to.quietAsked == 0) {
                askQuiet(to, memory); // before the kernel has its Rversion, so before any request of the mount
            }
            off += size;
        }
        put(to, buf.asSlice(run, length - run), memory);
    }

    /** Puts whole messages, copied, into the replies of {@code to}; nothing when null (a detached mount's). */
    private static void put(RelayConnection to, MemorySegment data, Memory memory) {
        if (to != null) {
            to.putWhole(data, memory.scratch());
        }
    }

    /** Asks the host whether it takes quiet clunks (Tquiet), once per mount. */
    private void askQuiet(RelayConnection to, Memory memory) {
        MemorySegment q = memory.tquiet();
        P9Frames.head(q, Ws9p.TQUIET_SIZE, Ws9p.TQUIET, Ws9p.NOTAG);
        if (port.send(to, q, Ws9p.TQUIET_SIZE, null, memory.scratch().st())) {
            to.quietAsked = 1;
        }
    }
}
