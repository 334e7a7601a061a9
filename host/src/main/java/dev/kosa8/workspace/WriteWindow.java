package dev.kosa8.workspace;

import dev.kosa8.protocol.Ws9p;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The write window: a file the guest writes as a virtio-blk disk and the
 * daemon reads, which carries the data of large Twrite requests past the
 * workspace's virtio-serial port. The mirror of {@link ReadWindow}.
 *
 * <p>Why: towards the host, virtio-console takes at most 32 KiB per write
 * to the port, and each piece is a copy in the guest, a notification that
 * QEMU handles on the vCPU's thread and a send to the server's socket, so a
 * 1 MiB Twrite was 32 of them (bench/history/workspace.md, "Where a
 * sequential write's time goes"). Through a block device the same MiB is
 * one O_DIRECT write that QEMU's block layer takes straight from the
 * relay's memory to this file.
 *
 * <p>The exchange: the guest's relay owns the slots. It writes a Twrite's
 * data (of at least 32 KiB) to a free slot, at {@code slot * Ws9p.SLOT_SIZE},
 * and sends, in place of the Twrite, a {@code Twritew}: the Twrite's own
 * header with the type changed, then the slot ({@link Ws9p} defines its
 * number and layout). The server reads
 * the slot into the request's buffer, which makes it the Twrite it stands
 * for ({@link #expand}), and serves that; the slot is the relay's again
 * once the answer to that tag reaches it, and the server has read the slot
 * by then. The kernel's 9p client never sees a Twritew. The relay sends one
 * only when the guest has the disk, which QEMU gives it only when the
 * daemon gives the server this file; a server without one answers a
 * Twritew EPROTO, as any type it does not know.
 *
 * <p>For checkpoints there is nothing to wait for beyond the server's
 * pause: a slot holds data the server has still to read only while its
 * Twritew is unanswered, and a checkpoint's instant has no request in
 * flight. The file is not part of a checkpoint; each QEMU gets a new one.
 *
 * <p>Security: the guest writes this file as it likes, at any time; what
 * the server takes from it is the data of a write the guest asked for in
 * its own folder, no more than {@code count} bytes of the slot named, and a
 * slot or count outside the window is answered EINVAL. QEMU cannot grow the
 * file: the disk's size is fixed when QEMU opens it.
 */
final class WriteWindow implements AutoCloseable {
    private final FileChannel file;
    private final int slots;

    private WriteWindow(FileChannel file, int slots) {
        this.file = file;
        this.slots = slots;
    }

    /**
     * Opens the write window file QEMU gives the guest ({@code VmSpec.workspaceWrites}), for reading; its
     * size sets the number of slots. Null when there is none.
     */
    static WriteWindow open(Path path) throws IOException {
        if (path == null) {
            return null;
        }
        FileChannel f = FileChannel.open(path, StandardOpenOption.READ);
        return new WriteWindow(f, ReadWindow.slotsOf(f, path, "write window"));
    }

    /**
     * Rewrites the Twritew in {@code request} (a whole frame, position 0 to
     * its limit; its capacity at least {@code msize}) into the Twrite it
     * stands for, the data read from its slot.
     *
     * @throws P9Exception EINVAL for a frame of the wrong size, a slot
     *                     outside the window, or a count larger than a slot
     *                     or than msize allows; EIO if the file cannot be read
     */
    void expand(ByteBuffer request, int msize) throws P9Exception {
        ByteBuffer le = request.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int tag = request.limit() >= P9Codec.HEADER ? le.getShort(5) & 0xffff : P9Codec.NOTAG;
        if (request.limit() != Ws9p.TWRITEW_SIZE) {
            throw new P9Exception("a Twritew of " + request.limit() + " bytes", tag, ErrnoException.EINVAL, false);
        }
        long count = Integer.toUnsignedLong(le.getInt(Ws9p.TWRITEW_COUNT));
        long slot = Integer.toUnsignedLong(le.getInt(Ws9p.TWRITEW_SLOT));
        if (slot >= slots || count > Ws9p.SLOT_SIZE
                || Ws9p.TWRITE_HEADER + count > Math.min(msize, request.capacity())) {
            throw new P9Exception("a Twritew of " + count + " bytes in slot " + slot, tag, ErrnoException.EINVAL,
                    false);
        }
        ByteBuffer data = request.duplicate().clear().position(Ws9p.TWRITE_HEADER)
                .limit(Ws9p.TWRITE_HEADER + (int) count);
        long at = slot * Ws9p.SLOT_SIZE;
        try {
            while (data.hasRemaining()) {
                int n = file.read(data, at);
                if (n < 0) {
                    throw new IOException("end of file at " + at);
                }
                at += n;
            }
        } catch (IOException e) {
            throw new P9Exception("cannot read the write window: " + e.getMessage(), tag, ErrnoException.EIO, false);
        }
        request.limit(Ws9p.TWRITE_HEADER + (int) count);
        le.putInt(0, Ws9p.TWRITE_HEADER + (int) count).put(4, (byte) P9Codec.TWRITE);
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
