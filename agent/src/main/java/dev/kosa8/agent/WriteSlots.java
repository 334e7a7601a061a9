package dev.kosa8.agent;

import dev.kosa8.protocol.Ws9p;
import java.util.Arrays;

/**
 * The write window's disk and its slots, each lent to one Twrite (by its
 * tag) from when its data is written until the host's answer to that tag
 * comes back: the host reads the slot before it answers. Taken by a
 * connection's up pump ({@link UpPump}), given back by the port's reader
 * ({@link DownPump}).
 */
final class WriteSlots {
    /** The write window's disk, opened O_DIRECT. */
    final int fd;
    private final boolean[] lent;
    /** The slot lent to each tag, or -1. */
    private final int[] slotOfTag = new int[Ws9p.NOTAG + 1];
    private int out;
    /** Data that could not be written to the window; logged the first time. */
    int failures;

    WriteSlots(int fd, int slots) {
        this.fd = fd;
        this.lent = new boolean[slots];
        Arrays.fill(slotOfTag, -1);
    }

    /** A free slot, now lent to {@code tag}; -1 if none is free (the data then goes through the port). */
    synchronized int take(int tag) {
        if (out == lent.length || slotOfTag[tag] >= 0) {
            return -1;
        }
        for (int i = 0; i < lent.length; i++) {
            if (!lent[i]) {
                lent[i] = true;
                slotOfTag[tag] = i;
                out++;
                return i;
            }
        }
        return -1;
    }

    /** The answer to {@code tag} came (or its Twritew was never sent): the slot lent to it, if any, is free. */
    synchronized void answered(int tag) {
        int slot = slotOfTag[tag];
        if (slot >= 0) {
            slotOfTag[tag] = -1;
            lent[slot] = false;
            out--;
        }
    }

    /** A new mount: the old server's answers will not come, and no slot of its is read any more. */
    synchronized void reset() {
        Arrays.fill(slotOfTag, -1);
        Arrays.fill(lent, false);
        out = 0;
    }

    /** How many slots are lent out. */
    synchronized int lentOut() {
        return out;
    }
}
