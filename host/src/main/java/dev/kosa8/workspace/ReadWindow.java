package dev.kosa8.workspace;

import dev.kosa8.protocol.Ws9p;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The read window: a file the daemon writes and the guest reads as a
 * read-only virtio-blk disk, which carries the data of large Rread replies
 * past the workspace's virtio-serial port.
 *
 * <p>Why: towards the guest, the port moves 4 KiB at a time (QEMU's socket
 * chardev reads 4 KiB per main-loop turn, and virtio-console gives the
 * guest one-page receive buffers), so a 1 MiB Rread costs the guest 256
 * interrupts and 256 reads by the agent's relay: under TCG about 120 ms per
 * MiB (bench/history/workspace.md, "Where the time goes"). Through a block device the same MiB is
 * one or two requests that QEMU answers with a read straight into the
 * relay's buffer. The port still carries every message; only an Rread's
 * data moves through the window.
 *
 * <p>The exchange (the kernel's 9p client never sees it: the relay or the
 * guest's module turns it back into a plain Rread), three messages whose
 * numbers and layouts {@link Ws9p} defines:
 * <ul>
 *   <li>{@code Twindow} (relay to server, once per mount, after its
 *       Tversion): "this relay reads the window". Without it the server
 *       never uses the window (an agent from before the window, or one that
 *       could not open the disk).</li>
 *   <li>{@code Rreadw} (server to relay), in place of an Rread of at least
 *       {@link #THRESHOLD} bytes: its tag, count, slot and serial; the data
 *       is at {@code slot * Ws9p.SLOT_SIZE} of the window. A slot holds the
 *       1 MiB Linux asks for at most (msize - 24); a reply with more, which
 *       only a client of its own making asks for, goes through the port.</li>
 *   <li>{@code Treturn} (relay to server), once the relay has read a slot:
 *       the slot and its serial. The slot is written again only after it
 *       came back with its serial, so a late or repeated return (an old
 *       mount's) frees nothing in use.</li>
 * </ul>
 *
 * <p>For checkpoints: a slot handed out and not returned is data the
 * guest's relay may still be reading, and the window is not part of a
 * checkpoint; so the instant of a checkpoint waits until every slot is back
 * ({@link WorkspaceServer#pauseSettled}). A restored machine's relay then
 * reads nothing from the window until the server (restored with the
 * window on or off, {@link WorkspaceSnapshot}) sends it a new Rreadw.
 *
 * <p>Security: the guest can only read the window (QEMU opens the file
 * read-only and gives the guest a read-only disk); what it can read there is
 * data it read from its own folder. A forged Treturn can at worst make the
 * server reuse a slot the relay is still reading: the guest's own read
 * then gets wrong bytes of its own folder.
 */
final class ReadWindow implements AutoCloseable {
    /**
     * The smallest Rread sent through the window: below it, a reply's few
     * port pieces cost the guest less than a block request and a Treturn.
     */
    static final int THRESHOLD = 32 * 1024;
    private static final int RREAD = 117;

    private final FileChannel file;
    private final int slots;
    private final long[] serials;
    private final boolean[] lent;
    private int out;
    private long nextSerial = 1;
    private boolean enabled;

    private ReadWindow(FileChannel file, int slots) {
        this.file = file;
        this.slots = slots;
        this.serials = new long[slots];
        this.lent = new boolean[slots];
    }

    /**
     * Opens the window file QEMU gives the guest ({@code VmSpec.workspaceWindow}); its size
     * sets the number of slots. Null when there is none: the server then answers only through the port.
     */
    static ReadWindow open(Path path) throws IOException {
        if (path == null) {
            return null;
        }
        FileChannel f = FileChannel.open(path, StandardOpenOption.WRITE);
        return new ReadWindow(f, slotsOf(f, path, "read window"));
    }

    /**
     * How many slots of msize a window file holds (at most {@link Ws9p#MAX_SLOTS}), this one's or the write window's;
     * closes the file and fails if not one.
     */
    static int slotsOf(FileChannel f, Path path, String what) throws IOException {
        int slots = (int) Math.min(Ws9p.MAX_SLOTS, f.size() / Ws9p.SLOT_SIZE);
        if (slots < 1) {
            f.close();
            throw new IOException("the " + what + " " + path + " is smaller than one slot (" + Ws9p.SLOT_SIZE
                    + " bytes)");
        }
        return slots;
    }

    /** A new mount: nothing lent out counts any more, and the window is off until its relay asks for it. */
    synchronized void newSession() {
        java.util.Arrays.fill(lent, false);
        out = 0;
        enabled = false;
        notifyAll();
    }

    /** The relay said it reads the window ({@code Twindow}), or a snapshot says it did. */
    synchronized void enable(boolean on) {
        enabled = on;
    }

    synchronized boolean enabled() {
        return enabled;
    }

    /**
     * If {@code reply} (a whole frame from position 0 to its limit) is an
     * Rread large enough and a slot is free, writes its data into the
     * window and rewrites {@code reply} as the Rreadw that points at it.
     * Otherwise, or when the window cannot be written, leaves it as it is.
     */
    void divert(ByteBuffer reply) {
        ByteBuffer le = reply.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (reply.limit() < P9Codec.READ_DATA_OFFSET + THRESHOLD || (le.get(4) & 0xff) != RREAD) {
            return;
        }
        int count = le.getInt(P9Codec.HEADER);
        if (count != reply.limit() - P9Codec.READ_DATA_OFFSET || count > Ws9p.SLOT_SIZE) {
            return;
        }
        int slot;
        long serial;
        synchronized (this) {
            if (!enabled || out == slots) {
                return;
            }
            slot = 0;
            while (lent[slot]) {
                slot++;
            }
            lent[slot] = true;
            out++;
            serial = nextSerial++ & 0xffff_ffffL;
            serials[slot] = serial;
        }
        try {
            ByteBuffer data = reply.slice(P9Codec.READ_DATA_OFFSET, count);
            long at = (long) slot * Ws9p.SLOT_SIZE;
            while (data.hasRemaining()) {
                at += file.write(data, at);
            }
        } catch (IOException e) {
            giveBack(slot, serial);
            return; // the port carries it as before
        }
        le.putInt(0, Ws9p.RREADW_SIZE).put(4, (byte) Ws9p.RREADW)
                .putInt(Ws9p.RREADW_COUNT, count).putInt(Ws9p.RREADW_SLOT, slot)
                .putInt(Ws9p.RREADW_SERIAL, (int) serial);
        reply.limit(Ws9p.RREADW_SIZE);
    }

    /**
     * A {@code Treturn}: the relay has read the slot. Frees it only if it
     * is lent out under that serial.
     *
     * @return whether it was
     */
    synchronized boolean giveBack(int slot, long serial) {
        if (slot < 0 || slot >= slots || !lent[slot] || serials[slot] != (serial & 0xffff_ffffL)) {
            return false;
        }
        lent[slot] = false;
        out--;
        if (out == 0) {
            notifyAll();
        }
        return true;
    }

    /** How many slots are lent out. */
    synchronized int lentOut() {
        return out;
    }

    /** Waits until no slot is lent out, or the deadline ({@link System#nanoTime}) passes; whether none is. */
    synchronized boolean awaitReturned(long deadlineNanos) throws InterruptedException {
        while (out > 0) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return true;
    }

    @Override
    public void close() {
        try {
            file.close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }
}
