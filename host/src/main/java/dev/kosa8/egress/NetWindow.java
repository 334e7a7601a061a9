package dev.kosa8.egress;

import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.NetLink;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;

/**
 * The network window on the daemon's side: a file QEMU gives the guest as a
 * read-only disk ({@link NetLink#WINDOW_SERIAL}), into whose slots a
 * stream's larger pieces towards the guest are written, so that the port
 * carries only a small {@link Message.NetWindowData} for each.
 *
 * <p>Why: QEMU's socket chardev reads the port's bytes 4 KiB per turn of
 * its main loop, and each read becomes a guest buffer and an interrupt;
 * a download through the port reached half of what QEMU's own user network
 * did, with QEMU's main loop the limit (docs/network.md, "Throughput").
 * A block request moves a whole slot, {@link NetLink#SLOT_DATA} bytes, at once.
 *
 * <p>A slot is lent under a serial, written into the slot's header and
 * named in the message; the agent gives it back with that serial once it
 * has read it ({@link Message.NetWindowReturn}), and a return under any
 * other serial frees nothing. The serials of a session start at a random
 * number, so a machine restored from a checkpoint, whose agent may still
 * read a slot of its own session, finds a header that is not its own and
 * resets the stream rather than hand the guest another session's bytes.
 * The window is not part of a checkpoint.
 *
 * <p>Security: the guest can only read the window (QEMU opens the file
 * read-only), and what it can read there are bytes of its own streams. What
 * it can withhold is slots: with none free, the link sends through the port
 * as before, so an agent that never gives one back costs speed, not memory.
 *
 * <p>Used on its link's event loop (one session's after another's). Its writes go to the host's page cache
 * there, at most a slot at a time, as the workspace's read window's do on its server's thread.
 */
final class NetWindow implements AutoCloseable {
    /**
     * The smallest piece sent through the window: below it, the few 4 KiB turns the port takes cost less than a
     * block request and a return.
     */
    static final int THRESHOLD = 16 * 1024;

    private static final SecureRandom RANDOM = new SecureRandom();

    private final FileChannel file;
    private final long[] serials = new long[NetLink.SLOTS];
    private final boolean[] lent = new boolean[NetLink.SLOTS];
    private final ByteBuffer header = ByteBuffer.allocate(NetLink.SLOT_HEADER).order(ByteOrder.LITTLE_ENDIAN);
    private int out;
    private long nextSerial;
    private boolean enabled;
    private final java.util.function.Consumer<String> log;

    private NetWindow(FileChannel file, java.util.function.Consumer<String> log) {
        this.file = file;
        this.log = log;
        newSession();
    }

    /** Opens the window file the daemon made for this QEMU; null for none (the link then uses the port alone). */
    static NetWindow open(Path path, java.util.function.Consumer<String> log) throws IOException {
        if (path == null) {
            return null;
        }
        // the file lies in the machine's folder, which QEMU's jail may write: never follow a link there, never open
        // what is not a plain file of the window's size (a FIFO would block the daemon's open)
        var attributes = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (!attributes.isRegularFile() || attributes.size() != NetLink.WINDOW_BYTES) {
            throw new IOException("the network window " + path + " is not a plain file of " + NetLink.WINDOW_BYTES
                    + " bytes");
        }
        // read and write: an open of a FIFO swapped in after the check then returns at once (write-only would wait for
        // a reader), and its size, 0, is refused below
        FileChannel f = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS);
        if (f.size() != NetLink.WINDOW_BYTES) {
            f.close();
            throw new IOException("the network window " + path + " holds " + f.size() + " bytes, not "
                    + NetLink.WINDOW_BYTES);
        }
        return new NetWindow(f, log);
    }

    /** A new session of the link: nothing lent counts any more, and the window is off until the agent is ready. */
    synchronized void newSession() {
        java.util.Arrays.fill(lent, false);
        out = 0;
        enabled = false;
        nextSerial = RANDOM.nextLong();
    }

    /** The agent said it reads the window ({@link Message.NetWindowReady}). */
    synchronized void enable() {
        enabled = true;
    }

    /** Whether the agent reads the window in this session. */
    synchronized boolean enabled() {
        return enabled;
    }

    /** Whether a piece of {@code bytes} would go through the window now. */
    synchronized boolean takes(int bytes) {
        return enabled && out < NetLink.SLOTS && bytes >= THRESHOLD;
    }

    /**
     * Writes {@code count} bytes of {@code data} (from its reader index, which moves past them) into a free slot and
     * returns the message that points at them; null if no slot is free or the file cannot be written, and then
     * {@code data} has not moved.
     */
    synchronized Message.NetWindowData lend(int channel, ByteBuf data, int count) {
        if (!enabled || out == NetLink.SLOTS || count < 1 || count > NetLink.SLOT_DATA) {
            return null;
        }
        int slot = 0;
        while (lent[slot]) {
            slot++;
        }
        long serial = nextSerial++;
        long at = (long) slot * NetLink.SLOT_SIZE;
        try {
            header.clear();
            header.putLong(serial).putInt(count).putInt(channel).flip();
            while (header.hasRemaining()) {
                file.write(header, at + header.position());
            }
            ByteBuffer bytes = data.nioBuffer(data.readerIndex(), count);
            long to = at + NetLink.SLOT_HEADER;
            while (bytes.hasRemaining()) {
                to += file.write(bytes, to);
            }
        } catch (IOException e) {
            // the file cannot take it (its file system full, say): off for the session, said once, and the port
            // carries this piece and every one after, read in the port's sizes again
            enabled = false;
            log.accept("cannot write the network window (" + e + "); every byte goes through the port until the "
                    + "link's next session");
            return null;
        }
        data.skipBytes(count);
        lent[slot] = true;
        serials[slot] = serial;
        out++;
        return new Message.NetWindowData(channel, slot, count, serial);
    }

    /** The agent gave a slot back: freed only if it is lent under that serial; whether it was. */
    synchronized boolean giveBack(Message.NetWindowReturn r) {
        if (!lent[r.slot()] || serials[r.slot()] != r.serial()) {
            return false;
        }
        lent[r.slot()] = false;
        out--;
        return true;
    }

    /** How many slots are lent (tests). */
    synchronized int lentOut() {
        return out;
    }

    @Override
    public void close() {
        try {
            file.close();
        } catch (IOException ignored) {
            // nothing was lost: the guest's reads of it end with its QEMU
        }
    }
}
