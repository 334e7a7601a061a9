package dev.kosa8.agent;

import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.NetLink;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.concurrent.ArrayBlockingQueue;

/**
 * The network window in the guest: the read-only disk ({@link NetLink#WINDOW_SERIAL}) whose slots hold the larger
 * pieces the host sends towards the guest's connections ({@link Message.NetWindowData}). Each is read with one
 * O_DIRECT pread, past the guest's page cache (the host rewrites a slot once it is given back, and a cached copy
 * would be an earlier piece). The host's {@code dev.kosa8.egress.NetWindow} says why the window exists.
 *
 * <p>Read by the port's reader ({@link NetPort}) alone; the relay's thread gives its buffers back.
 */
final class NetWindowReader {
    /**
     * The most buffers a slot is read into and handed to the relay, which writes the guest's socket straight from
     * it and gives it back: no copy in the agent's heap, no garbage per piece. Made as pieces need them (an idle
     * agent has none), up to 16 (4.1 MiB, off the heap), at most {@link #PER_STREAM} for one stream. With none free a
     * slot is read into the reader's own buffer and copied into the heap,
     * which costs the agent's small heap collections under load (measured: docs/network.md, "Throughput").
     */
    static final int BUFFERS = 16;
    /**
     * The most of them one stream holds: half, so a stream whose program stopped reading leaves the rest to the
     * others (a 1 MiB window is four whole slots, or 64 pieces of 16 KiB).
     */
    static final int PER_STREAM = BUFFERS / 2;
    private static final int SECTOR = 512;
    private static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final int fd;
    private final MemorySegment spare;
    private final ArrayBlockingQueue<MemorySegment> free = new ArrayBlockingQueue<>(BUFFERS);
    private final MemorySegment st;
    private final Arena arena;
    /** Buffers lent to each stream's pieces, by channel: taken on the port's reader, given back on the relay. */
    private final java.util.concurrent.ConcurrentHashMap<Integer, Integer> held =
            new java.util.concurrent.ConcurrentHashMap<>();
    /** Buffers made so far, at most {@link #BUFFERS}. */
    private int made;

    NetWindowReader(int fd, Arena arena) {
        this.fd = fd;
        this.arena = arena;
        this.spare = arena.allocate(NetLink.SLOT_SIZE, 4096);
        this.st = Libc.callState(arena);
    }

    /** Opens the guest's network window, found by its serial number among the block devices; null if it has none. */
    static NetWindowReader open() {
        try {
            Path disk = WorkspaceDevices.disk(NetLink.WINDOW_SERIAL);
            if (disk == null) {
                Log.info("network: the guest has no network window; every byte comes through the port");
                return null;
            }
            int fd = Posix.open("/dev/" + disk.getFileName(), Posix.O_RDONLY | Posix.O_DIRECT);
            NetWindowReader reader = new NetWindowReader(fd, Arena.global());
            try {
                // one read before the host is told: a disk that cannot be read leaves every byte to the port, rather
                // than costing each larger piece its stream
                RelayIo.preadFully(fd, reader.spare, 4096, 0, reader.st);
            } catch (RuntimeException e) {
                Posix.close(fd);
                throw e;
            }
            Log.info("network: larger pieces come through the window /dev/" + disk.getFileName());
            return reader;
        } catch (java.io.IOException | RuntimeException e) {
            Log.info("network: no network window (" + e.getMessage() + "); every byte comes through the port");
            return null;
        }
    }

    /**
     * The bytes {@code d} points at, in one of the reader's buffers (its {@code release} gives it back) or, with none
     * free, copied; null when the slot's header is not {@code d}'s (the slot was written for another message: a
     * machine restored from a checkpoint reads what a later session of the host wrote) or it cannot be read. Either
     * way the slot may be given back.
     */
    NetStream.Down read(Message.NetWindowData d) {
        MemorySegment buffer = null;
        if (heldBy(d.channel()) < PER_STREAM) {
            buffer = free.poll();
            if (buffer == null && made < BUFFERS) {
                try {
                    buffer = arena.allocate(NetLink.SLOT_SIZE, 4096);
                    made++;
                } catch (OutOfMemoryError e) {
                    buffer = null; // the spare, then; the link reads on
                }
            }
        }
        boolean own = buffer != null;
        if (!own) {
            buffer = spare;
        }
        // whole 4 KiB pages: a disk's logical blocks may be that large, and a slot is a whole number of them
        long length = (NetLink.SLOT_HEADER + (long) d.count() + 4095) / 4096 * 4096;
        try {
            RelayIo.preadFully(fd, buffer, length, (long) d.slot() * NetLink.SLOT_SIZE, st);
        } catch (RuntimeException e) {
            Log.info("network: cannot read window slot " + d.slot() + " (" + e.getMessage() + ")");
            giveBack(buffer, own);
            return null;
        }
        if (buffer.get(LE_LONG, 0) != d.serial() || buffer.get(LE_INT, 8) != d.count()
                || buffer.get(LE_INT, 12) != d.channel()) {
            giveBack(buffer, own);
            return null;
        }
        MemorySegment bytes = buffer.asSlice(NetLink.SLOT_HEADER, d.count());
        if (!own) {
            return new NetStream.Down(ByteBuffer.wrap(bytes.toArray(ValueLayout.JAVA_BYTE)), null);
        }
        MemorySegment taken = buffer;
        int channel = d.channel();
        held.merge(channel, 1, Integer::sum);
        return new NetStream.Down(bytes.asByteBuffer(), () -> {
            held.computeIfPresent(channel, (c, n) -> n == 1 ? null : n - 1);
            free.add(taken);
        });
    }

    /** Buffers the stream on {@code channel} holds now (tests). */
    int heldBy(int channel) {
        Integer n = held.get(channel);
        return n == null ? 0 : n;
    }

    private void giveBack(MemorySegment buffer, boolean own) {
        if (own) {
            free.add(buffer);
        }
    }

    /** Buffers made and not lent now (tests). */
    int freeBuffers() {
        return free.size();
    }

    /** Buffers made so far (tests). */
    int buffersMade() {
        return made;
    }
}
