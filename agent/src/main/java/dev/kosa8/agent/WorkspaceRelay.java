package dev.kosa8.agent;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Carries the workspace's 9p traffic between the guest kernel and the host.
 * The kernel's 9p client cannot write to a virtio-serial port itself (DESIGN
 * fact 6), so it mounts through two pipes ({@code trans=fd}): it writes its
 * requests into one and reads the host's replies from the other, and this
 * relay moves them between those pipes and the workspace's port, to the
 * host's 9p server behind it.
 *
 * <p>Pipes rather than a unix socket ({@code trans=unix}), for the large
 * reads: the relay hands the kernel an Rread's data with vmsplice(2), so the
 * pipe refers to the relay's memory and the kernel copies it once, where a
 * socket costs a copy into the socket's buffers first (and, with its small
 * send buffer, several wake-ups per MiB). Each pipe is sized beyond a whole
 * message, so a message goes in and out in one call.
 *
 * <p>Each direction is one platform thread with one buffer of native memory
 * as large as a whole 9p message, so a message crosses in one read and one
 * write, and no byte is copied in Java: pipes and port are read and written
 * with read(2)/write(2) straight into that memory.
 *
 * <p>The port is opened once for the agent's life (a virtio-serial port opens
 * only once) and read by one thread for that life; a mount's connection comes
 * and goes. When the host's server is replaced without the guest's state
 * (the daemon restarted), the old mount's fids mean nothing to the new one,
 * so the host has the workspace mounted afresh: {@link #detach} ends the
 * old mount's connection, which fails every request the kernel still waits
 * on instead of leaving the process waiting forever, and then the host's
 * messages are dropped until the answer to the new mount's Tversion:
 * whatever came before it answers the old mount. (The host's server answers
 * every request it received before a Tversion before answering that.)
 *
 * <p>Large reads' data comes through the read window, a read-only disk, not
 * through the port (which hands the guest 4 KiB per read): the host sends
 * an Rreadw naming a slot of the window, the relay reads the slot with one
 * O_DIRECT pread, tells the host it may use the slot again (Treturn), and
 * gives the kernel the plain Rread. The relay asks for this once per mount,
 * with a Twindow after the mount's Tversion, and only if it could open the
 * disk. The host's {@code dev.kosa8.workspace.ReadWindow} documents the
 * three messages. Both directions write to the port (the Treturns come from
 * the reader of the port), so each writes whole messages under one lock.
 *
 * <p>Large writes' data goes the other way past the port, through the write
 * window, a disk the guest writes and the host reads ({@link WriteSlots}):
 * towards the host the port takes at most 32 KiB per write, each piece a
 * copy, a notification and a send in QEMU, so a 1 MiB Twrite was 32 of them.
 * The relay writes a Twrite's data to a free slot with one O_DIRECT pwrite
 * and sends the host a Twritew (the Twrite's header and the slot) instead;
 * the host reads the slot before it answers, so the slot is free again once
 * the answer to that tag comes back. The host's
 * {@code dev.kosa8.workspace.WriteWindow} documents the message.
 *
 * <p>The kernel's Tclunks (a quarter of its requests in metadata work) are
 * answered by the relay itself once the host has said it takes quiet clunks:
 * the relay sends the host a Tclunkq, which has no answer, and puts the
 * Rclunk into the replies at once, so the kernel's wait ends in the guest.
 * The relay asks (Tquiet) when the mount's Rversion passes, and takes the
 * host's answer for itself. The host's {@code dev.kosa8.workspace.QuietClunks}
 * documents the exchange. Both threads then write to the replies, each whole
 * messages under the connection's lock.
 */
final class WorkspaceRelay {
    static final String PORT_NAME = "dev.kosa8.ws9p";
    /** The mount's source, as /proc/mounts shows it ({@code trans=fd} has no address). */
    static final String SOURCE = "kosa8-workspace";
    private static final int RVERSION = 101;
    private static final int RLERROR = 7, RREAD = 117, TWRITE = 118, TCLUNK = 120, RCLUNK = 121;
    /** Quiet clunks (the host's {@code dev.kosa8.workspace.QuietClunks}): a Tclunk the relay has answered. */
    private static final int TCLUNKQ = 247, TQUIET = 248, RQUIET = 249;
    private static final int TCLUNK_SIZE = 11;
    /** A Twrite whose data is in a slot of the write window: the Twrite's header, then slot[4]. */
    private static final int TWRITEW = 253;
    /** size[4] type[1] tag[2] fid[4] offset[8] count[4]: a Twrite before its data. */
    private static final int P9_WRITE_HEADER = 23;
    private static final int TWRITEW_SIZE = P9_WRITE_HEADER + 4;
    /**
     * The smallest Twrite whose data goes through the write window: the port
     * takes up to 32 KiB in one piece, so a smaller one crosses it in one
     * write, as cheaply as a block request would.
     */
    private static final int WRITE_THRESHOLD = 32 * 1024;
    private static final int PAGE = 4096;
    private static final int TWINDOW = 250, RREADW = 251, TRETURN = 252;
    private static final int RREADW_SIZE = 19, TRETURN_SIZE = 15;
    /** Each slot of the read window holds one reply's data: at most 1 MiB, the fd transport's msize. */
    private static final long WINDOW_SLOT = 1 << 20;
    /** O_DIRECT reads whole sectors. */
    private static final int SECTOR = 512;
    /**
     * How many Rreads' data the pipe of replies may refer to at once: the
     * kernel reads each as soon as it is there, so a buffer comes round again
     * long after it was read; one that has not is copied instead.
     */
    private static final int RING = 4;
    /** The serial number of the read window's disk (the host's {@code QemuCommandLine.WORKSPACE_WINDOW_SERIAL}). */
    static final String WINDOW_SERIAL = "kosa8-ws9p-window";
    /** The serial number of the write window's disk (the host's {@code QemuCommandLine.WORKSPACE_WRITES_SERIAL}). */
    static final String WRITES_SERIAL = "kosa8-ws9p-writes";
    private static final int NOTAG = 0xffff;
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort LE_SHORT =
            ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final int portFd;
    /** The read window's disk, opened O_DIRECT; -1 when the guest has none (the port carries everything). */
    private final int windowFd;
    /** The write window's disk, opened O_DIRECT, and its slots; null when the guest has none. */
    private final WriteSlots writes;
    /** Put in place of a connection's end that is done with, so its number stays valid until its user closes it. */
    private final int devNull;
    private final int bufferSize;
    /** The CPU taking the port's interrupts, where both directions' threads run ({@link InterruptCpu}); -1 if unknown. */
    private final int cpu;
    private final Object lock = new Object();
    /** Held while a whole message is written to the port: both threads write there. */
    private final Object portLock = new Object();
    /** Messages that could not be read from the window; logged the first time. */
    private int windowFailures;
    /** The current mount's connection; null between mounts. Guarded by {@link #lock}. */
    private Connection current;
    private Thread up;
    /** Connections detached whose replies' end the port's reader has still to close. Guarded by {@link #lock}. */
    private final List<Connection> retired = new ArrayList<>();
    /** Set by {@link #detach}: the host's messages are for the old mount until its Rversion. */
    private volatile boolean awaitingVersion;

    private WorkspaceRelay(int portFd, int windowFd, WriteSlots writes, int bufferSize, int cpu) {
        this.portFd = portFd;
        this.windowFd = windowFd;
        this.writes = writes;
        this.bufferSize = bufferSize;
        this.cpu = cpu;
        this.devNull = Posix.open("/dev/null", Posix.O_RDWR);
    }

    /**
     * One mount's connection: two pipes. The kernel holds the write end of
     * the requests and the read end of the replies; the relay the others.
     * Each of the relay's ends is closed by the one thread that uses it, so a
     * number is never closed under a call that is using it.
     */
    private static final class Connection {
        /** Read end of the requests: read by this connection's up thread, which closes it when it ends. */
        final int requests;
        /** Write end of the requests, the kernel's {@code wfdno}; kept to wake the up thread when detached. */
        final int kernelWrites;
        /**
         * Write end of the replies, non-blocking: written by both threads under {@link #replying}, and
         * once retired closed by the port's reader under it too (a put checks {@link #closed} under it).
         */
        final int replies;
        /** Read end of the replies, the kernel's {@code rfdno}: the relay's copy goes once the mount has it. */
        private int kernelReads;
        /** Set under the port's lock: from then on nothing of this connection goes to the port. */
        volatile boolean closed;
        /** Bytes put into the replies so far. Guarded by {@link #replying}. */
        long written;
        /** Held while whole messages go into the replies: both threads put some there. */
        final Object replying = new Object();
        /** Whether the host takes quiet clunks: set by the port's reader when its Rquiet comes. */
        volatile boolean quiet;
        /** Where this mount's Tquiet is: not sent, sent, or answered (either way). The port's reader's alone. */
        int quietAsked;

        Connection(int requests, int kernelWrites, int replies, int kernelReads) {
            this.requests = requests;
            this.kernelWrites = kernelWrites;
            this.replies = replies;
            this.kernelReads = kernelReads;
        }

        synchronized void closeKernelReads() {
            if (kernelReads >= 0) {
                Posix.close(kernelReads);
                kernelReads = -1;
            }
        }
    }

    /** Opens the workspace's port (and its read window, if the guest has one) and starts reading it, for the agent's lifetime. */
    static WorkspaceRelay open(int msize) throws IOException, InterruptedException {
        Path device = VirtioPort.find(PORT_NAME, 5_000);
        int cpu = InterruptCpu.ofPort(device).orElse(-1);
        Log.info(cpu < 0 ? "workspace relay: the port's interrupt CPU is unknown; its threads run anywhere"
                : "workspace relay: its threads run on CPU " + cpu + ", which takes the port's interrupts");
        WorkspaceRelay relay = new WorkspaceRelay(Posix.open(device.toString(), Posix.O_RDWR), openWindow(),
                openWrites(), msize, cpu);
        Thread down = new Thread(relay::hostToKernel, "ws9p-down");
        down.setDaemon(true);
        down.start();
        return relay;
    }

    /** The read window's disk, found by its serial number among the block devices; -1 if there is none. */
    private static int openWindow() {
        try {
            Path disk = disk(WINDOW_SERIAL);
            if (disk != null) {
                int fd = Posix.open("/dev/" + disk.getFileName(), Posix.O_RDONLY | Posix.O_DIRECT);
                Log.info("workspace relay: large reads come through the read window /dev/" + disk.getFileName());
                return fd;
            }
        } catch (IOException | RuntimeException e) {
            Log.info("workspace relay: no read window (" + e.getMessage() + "); all data comes through the port");
            return -1;
        }
        Log.info("workspace relay: the guest has no read window; all read data comes through the port");
        return -1;
    }

    /** The write window's disk and its slots (one per MiB of it), or null if there is none. */
    private static WriteSlots openWrites() {
        try {
            Path disk = disk(WRITES_SERIAL);
            if (disk != null) {
                // /sys/block/X/size counts 512-byte sectors whatever the disk's block size
                long bytes = Long.parseLong(Files.readString(disk.resolve("size")).trim()) * 512;
                int slots = (int) Math.min(1024, bytes / WINDOW_SLOT);
                if (slots > 0) {
                    int fd = Posix.open("/dev/" + disk.getFileName(), Posix.O_RDWR | Posix.O_DIRECT);
                    Log.info("workspace relay: large writes go through the write window /dev/" + disk.getFileName()
                            + " (" + slots + " slots)");
                    return new WriteSlots(fd, slots);
                }
            }
        } catch (IOException | RuntimeException e) {
            Log.info("workspace relay: no write window (" + e.getMessage() + "); all data goes through the port");
            return null;
        }
        Log.info("workspace relay: the guest has no write window; all written data goes through the port");
        return null;
    }

    /** The block device whose serial number is {@code serial}, as its directory in /sys/block; null if none. */
    private static Path disk(String serial) throws IOException {
        try (var disks = Files.list(Path.of("/sys/block"))) {
            for (Path disk : (Iterable<Path>) disks::iterator) {
                Path file = disk.resolve("serial");
                if (Files.isReadable(file) && Files.readString(file).trim().equals(serial)) {
                    return disk;
                }
            }
        }
        return null;
    }

    /**
     * The write window's slots, each lent to one Twrite (by its tag) from
     * when its data is written until the host's answer to that tag comes
     * back: the host reads the slot before it answers. Taken by a
     * connection's up thread, given back by the port's reader.
     */
    static final class WriteSlots {
        final int fd;
        private final boolean[] lent;
        /** The slot lent to each tag, or -1. */
        private final int[] slotOfTag = new int[NOTAG + 1];
        private int out;
        /** Data that could not be written to the window; logged the first time. */
        int failures;

        WriteSlots(int fd, int slots) {
            this.fd = fd;
            this.lent = new boolean[slots];
            java.util.Arrays.fill(slotOfTag, -1);
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
            java.util.Arrays.fill(slotOfTag, -1);
            java.util.Arrays.fill(lent, false);
            out = 0;
        }

        /** How many slots are lent out. */
        synchronized int lentOut() {
            return out;
        }
    }

    /**
     * Makes the connection for the mount about to be made and starts relaying
     * its requests; returns the mount options that hand the kernel its ends
     * ({@code trans=fd,rfdno=..,wfdno=..}). Call {@link #mounted} once the
     * mount is made, {@link #detach} if it failed.
     */
    String connect() {
        // a pipe of twice the largest message: a whole one goes in with one call, and the next can follow
        int[] requests = RelayIo.pipe(2 * bufferSize);
        int[] replies;
        try {
            // room for every Rread of the ring (a page a slot) and the replies between them
            replies = RelayIo.pipe((RING + 2) * bufferSize);
            RelayIo.setNonBlocking(replies[1]);
        } catch (RuntimeException e) {
            Posix.close(requests[0]);
            Posix.close(requests[1]);
            throw e;
        }
        Connection c = new Connection(requests[0], requests[1], replies[1], replies[0]);
        if (writes != null) {
            writes.reset();
        }
        Thread t = new Thread(() -> kernelToHost(c), "ws9p-up");
        t.setDaemon(true);
        synchronized (lock) {
            current = c;
            up = t;
        }
        t.start();
        return "trans=fd,rfdno=" + replies[0] + ",wfdno=" + requests[1];
    }

    /** The kernel holds its ends of the connection now: the relay lets go of its copy of the replies' read end. */
    void mounted() {
        Connection c;
        synchronized (lock) {
            c = current;
        }
        if (c != null) {
            // with it gone, replies to a mount that has gone away fail (EPIPE) instead of filling the pipe
            c.closeKernelReads();
        }
    }

    /**
     * Ends the current mount's connection: the kernel fails what that mount
     * still waits on. What the host sends next is dropped up to the next
     * mount's Rversion.
     */
    void detach() {
        Connection c;
        Thread t;
        synchronized (lock) {
            c = current;
            t = up;
            current = null;
            up = null;
            awaitingVersion = true;
        }
        if (c == null) {
            return;
        }
        synchronized (portLock) {
            c.closed = true; // no request of the old mount follows the new one's Tversion to the port
        }
        c.closeKernelReads();
        // the last write end of the replies goes: the kernel's reader sees the pipe hung up and fails what it
        // waits on; the number stays valid (it is /dev/null now) until the port's reader, its user, closes it
        RelayIo.dupOnto(devNull, c.replies);
        synchronized (lock) {
            retired.add(c); // only now may the port's reader close the number: dup3 onto a number closed (and
                            // perhaps reused) meanwhile would replace another file
        }
        try (Arena arena = Arena.ofConfined()) {
            // wakes the up thread if it waits for a request: it finds the connection closed and ends
            RelayIo.writeSome(c.kernelWrites, arena.allocate(1), 1, Libc.callState(arena));
        } catch (RuntimeException e) {
            // the pipe is full (then the thread is not waiting) or the mount is gone
        }
        try {
            t.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Posix.close(c.kernelWrites);
    }

    /**
     * Passes the kernel's requests to the port, whole messages at a time
     * (the reader of the port writes Treturns between them), a large
     * Twrite's data through the write window if there is one. After the
     * mount's first message, its Tversion, asks for the read window if
     * there is one.
     *
     * <p>Requests are read to where a Twrite's data starts on a page
     * boundary, so the data of a Twrite that comes first in a read (a
     * writer's next Twrite waits for the answer to the one before) goes to
     * the disk straight from this buffer; O_DIRECT takes aligned memory
     * only, so one that does not is copied to an aligned buffer first.
     */
    private void kernelToHost(Connection c) {
        pin();
        try (Arena arena = Arena.ofConfined()) {
            // PAGE - 23 ahead of the buffer, and the sector an O_DIRECT write of its last data rounds up to after it
            MemorySegment whole = arena.allocate(bufferSize + 2L * PAGE, PAGE);
            MemorySegment buf = whole.asSlice(PAGE - P9_WRITE_HEADER, bufferSize + PAGE);
            Up up = new Up(buf, writes == null ? null : arena.allocate(bufferSize + PAGE, PAGE),
                    arena.allocate(TWRITEW_SIZE), Libc.callState(arena), arena.allocate(7), arena.allocate(7),
                    arena.allocate(8, 4));
            head(up.rclunk, 7, RCLUNK, 0); // its tag is each Tclunk's
            head(up.twindow, 7, TWINDOW, NOTAG);
            up.asked = windowFd < 0;
            long have = 0;
            while (true) {
                int n = RelayIo.readSome(c.requests, buf.asSlice(have), bufferSize - have, up.st);
                if (n < 0 || c.closed) {
                    Log.info("workspace relay: the mount's connection ended");
                    return;
                }
                have += n;
                long ready = wholeMessages(buf, have);
                if (ready == 0) {
                    continue;
                }
                if (!send(c, ready, up)) {
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
     * The up thread's memory: requests, an aligned copy of a Twrite's data, a Twritew, a call state, a
     * Twindow, an Rclunk and a pollfd.
     */
    private static final class Up {
        final MemorySegment buf, aligned, twritew, st, twindow, rclunk, pollfd;
        /** Whether the Twindow has gone (or need not go). */
        boolean asked;

        Up(MemorySegment buf, MemorySegment aligned, MemorySegment twritew, MemorySegment st,
                MemorySegment twindow, MemorySegment rclunk, MemorySegment pollfd) {
            this.buf = buf;
            this.aligned = aligned;
            this.twritew = twritew;
            this.st = st;
            this.twindow = twindow;
            this.rclunk = rclunk;
            this.pollfd = pollfd;
        }
    }

    /**
     * Sends the first {@code length} bytes of the buffer (whole messages,
     * or bytes not framed as 9p) to the port, each large Twrite among them
     * as a Twritew with its data in the write window, and each Tclunk, once
     * the host takes quiet clunks, as a Tclunkq that the relay answers
     * itself. False once the connection is closed.
     */
    private boolean send(Connection c, long length, Up up) {
        MemorySegment buf = up.buf;
        long run = 0;
        long off = 0;
        while ((writes != null || c.quiet) && length - off >= 7) {
            long size = Integer.toUnsignedLong(buf.get(LE_INT, off));
            if (size < 7 || off + size > length) {
                break; // not framed as 9p: passed on as it is below
            }
            int type = buf.get(ValueLayout.JAVA_BYTE, off + 4) & 0xff;
            if (type == TCLUNK && size == TCLUNK_SIZE && c.quiet) {
                buf.set(ValueLayout.JAVA_BYTE, off + 4, (byte) TCLUNKQ);
                // the Tclunkq goes before the answer: the kernel may use the fid's number again once it has that
                if (!toPort(c, buf.asSlice(run, off + size - run), up)) {
                    return false;
                }
                run = off + size;
                up.rclunk.set(LE_SHORT, 5, buf.get(LE_SHORT, off + 5));
                synchronized (c.replying) {
                    if (!put(c, up.rclunk, false, null, up.pollfd, up.st)) {
                        return false;
                    }
                }
            } else if (writes != null && type == TWRITE
                    && size >= P9_WRITE_HEADER + WRITE_THRESHOLD
                    && Integer.toUnsignedLong(buf.get(LE_INT, off + 19)) == size - P9_WRITE_HEADER) {
                int tag = buf.get(LE_SHORT, off + 5) & 0xffff;
                int slot = writes.take(tag);
                if (slot >= 0) {
                    if (!toPort(c, buf.asSlice(run, off - run), up)) {
                        writes.answered(tag);
                        return false;
                    }
                    run = off;
                    if (toWindow(buf, off, size, slot, up)) {
                        MemorySegment w = up.twritew;
                        MemorySegment.copy(buf, off, w, 0, P9_WRITE_HEADER);
                        w.set(LE_INT, 0, TWRITEW_SIZE);
                        w.set(ValueLayout.JAVA_BYTE, 4, (byte) TWRITEW);
                        w.set(LE_INT, P9_WRITE_HEADER, slot);
                        if (!toPort(c, w, up)) {
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
        return toPort(c, buf.asSlice(run, length - run), up);
    }

    /**
     * Writes a Twrite's data (at {@code off} of the buffer, {@code size} the
     * whole message's) to {@code slot} of the write window, rounded up to
     * whole sectors. False if it could not (logged the first time).
     */
    private boolean toWindow(MemorySegment buf, long off, long size, int slot, Up up) {
        long count = size - P9_WRITE_HEADER;
        long sectors = (count + SECTOR - 1) / SECTOR * SECTOR;
        MemorySegment data = buf.asSlice(off + P9_WRITE_HEADER);
        if (data.address() % SECTOR != 0) {
            MemorySegment.copy(data, 0, up.aligned, 0, count);
            data = up.aligned;
        }
        try {
            RelayIo.pwriteFully(writes.fd, data, sectors, slot * WINDOW_SLOT, up.st);
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
    private boolean toPort(Connection c, MemorySegment m, Up up) {
        if (m.byteSize() == 0) {
            return !c.closed;
        }
        synchronized (portLock) {
            if (c.closed) {
                return false;
            }
            Posix.writeAll(portFd, m, m.byteSize(), up.st);
            if (!up.asked) {
                Posix.writeAll(portFd, up.twindow, 7, up.st);
                up.asked = true;
            }
        }
        return true;
    }

    /**
     * The port hands the guest at most one page per read (virtio-console's
     * receive buffers are pages, and QEMU's chardev moves 4 KiB at a time), so
     * a 1 MiB reply arrives in 256 pieces. Passing each piece on would wake
     * the kernel's 9p reader 256 times; instead whole 9p messages are
     * gathered (the first 4 bytes of each are its size) and written to the
     * kernel in one go. Runs for the agent's lifetime: nothing the host sends
     * or a mount does ends it.
     */
    private void hostToKernel() {
        pin();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(bufferSize, 4096);
            MemorySegment st = Libc.callState(arena);
            MemorySegment[] ring = new MemorySegment[RING];
            for (int i = 0; i < RING; i++) {
                ring[i] = arena.allocate(bufferSize, 4096);
            }
            Down down = new Down(ring, new long[RING], arena.allocate(bufferSize, 4096), arena.allocate(TRETURN_SIZE),
                    arena.allocate(P9_READ_HEADER), arena.allocate(16, 8), arena.allocate(8, 4), arena.allocate(4, 4),
                    st, arena.allocate(7)); // an iovec, a pollfd and an int, aligned as the layouts that write them need
            long have = 0;
            while (true) {
                int n = RelayIo.readSome(portFd, buf.asSlice(have), bufferSize - have, st);
                if (n < 0) {
                    // no host connected to the port right now: wait for the server to come back; a part
                    // of a message from the one that went away must not be glued to the next one's
                    have = 0;
                    Thread.sleep(20);
                    continue;
                }
                have += n;
                long whole = wholeMessages(buf, have);
                if (whole == 0) {
                    continue;
                }
                deliver(buf, whole, down);
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

    /** Keeps the calling relay thread on the port's interrupt CPU, if known; one that cannot be pinned runs anywhere. */
    private void pin() {
        if (cpu >= 0) {
            try {
                RelayIo.pinCallingThread(cpu);
            } catch (RuntimeException e) {
                Log.info("workspace relay: " + Thread.currentThread().getName() + " runs anywhere: " + e.getMessage());
            }
        }
    }

    /** size[4] type[1] tag[2] count[4]: an Rread before its data. */
    private static final int P9_READ_HEADER = 11;

    /**
     * The port reader's memory and state: the ring of buffers Rreads' data is
     * read into and spliced from ({@code ends[i]}: where in the replies of
     * {@code ringOwner} buffer i's data ends), a buffer for data that is
     * copied instead, a Treturn, an Rread's header, an iovec, a pollfd, an int.
     */
    private static final class Down {
        final MemorySegment[] ring;
        final long[] ends;
        final MemorySegment spare, treturn, header, iov, pollfd, count, st, tquiet;
        Connection ringOwner;
        int next;

        Down(MemorySegment[] ring, long[] ends, MemorySegment spare, MemorySegment treturn, MemorySegment header,
                MemorySegment iov, MemorySegment pollfd, MemorySegment count, MemorySegment st, MemorySegment tquiet) {
            this.ring = ring;
            this.ends = ends;
            this.spare = spare;
            this.treturn = treturn;
            this.header = header;
            this.iov = iov;
            this.pollfd = pollfd;
            this.count = count;
            this.st = st;
            this.tquiet = tquiet;
        }
    }

    /**
     * Writes the first {@code length} bytes of {@code buf} (whole messages)
     * to the current mount, or drops them; an Rreadw among them becomes the
     * Rread it stands for, its slot given back either way.
     */
    private void deliver(MemorySegment buf, long length, Down down) {
        List<Connection> done;
        Connection to;
        synchronized (lock) {
            done = retired.isEmpty() ? List.of() : List.copyOf(retired);
            retired.clear();
            to = current;
        }
        for (Connection c : done) {
            synchronized (c.replying) { // the old up thread may be putting an Rclunk: it finds it closed after this
                Posix.close(c.replies); // /dev/null by now: nothing of the old mount is written after this
            }
        }
        long from = 0;
        if (awaitingVersion) {
            long version = afterStaleReplies(buf, length);
            from = version < 0 ? length : version;
            pass(buf, 0, from, null, down); // answers to the old mount: dropped, but the window's slots go back
            if (version < 0) {
                return;
            }
            awaitingVersion = false;
        }
        pass(buf, from, length, to, down);
    }

    /**
     * Writes bytes {@code from} to {@code length} of {@code buf} to {@code to}
     * (or drops them, when null), each Rreadw among them turned into its Rread
     * ({@link #fromWindow}: without a mount, only its slot given back), and
     * the write window's slot of each answered tag freed.
     */
    private void pass(MemorySegment buf, long from, long length, Connection to, Down down) {
        long run = from;
        long off = from;
        while (length - off >= 7) {
            long size = Integer.toUnsignedLong(buf.get(LE_INT, off));
            if (size < 7 || off + size > length) {
                break; // not framed as 9p: passed on as it is below
            }
            int tag = buf.get(LE_SHORT, off + 5) & 0xffff;
            if (writes != null) {
                writes.answered(tag); // the host has read that tag's slot, if any
            }
            int type = buf.get(ValueLayout.JAVA_BYTE, off + 4) & 0xff;
            if (type == RREADW && size == RREADW_SIZE) {
                put(to, buf.asSlice(run, off - run), down);
                fromWindow(buf.asSlice(off, size), to, down);
                run = off + size;
            } else if (tag == NOTAG && to != null && to.quietAsked == 1 && (type == RQUIET || type == RLERROR)) {
                // the answer to this mount's Tquiet, the relay's own: an Rlerror is a host from before quiet clunks
                put(to, buf.asSlice(run, off - run), down);
                run = off + size;
                to.quietAsked = 2;
                to.quiet = type == RQUIET && size == 7;
                Log.info(to.quiet ? "workspace relay: the host takes quiet clunks; the relay answers Tclunks"
                        : "workspace relay: the host does not take quiet clunks; Tclunks go to it as they are");
            } else if (type == RVERSION && tag == NOTAG && to != null && to.quietAsked == 0) {
                askQuiet(to, down); // before the kernel has its Rversion, so before any request of the mount
            }
            off += size;
        }
        put(to, buf.asSlice(run, length - run), down);
    }

    /** Asks the host whether it takes quiet clunks (Tquiet), once per mount. */
    private void askQuiet(Connection to, Down down) {
        MemorySegment q = down.tquiet;
        head(q, 7, TQUIET, NOTAG);
        synchronized (portLock) {
            if (to.closed) {
                return;
            }
            Posix.writeAll(portFd, q, 7, down.st);
        }
        to.quietAsked = 1;
    }

    /**
     * Reads an Rreadw's data from its slot of the window, gives the slot
     * back, and hands the kernel the Rread (or, if the window cannot be
     * read, an Rlerror EIO for that tag: the kernel's read fails, nothing
     * hangs). The data is spliced from the ring when the buffer it comes
     * round to has been read by the kernel, else copied from the spare one.
     */
    private void fromWindow(MemorySegment m, Connection to, Down down) {
        int tag = m.get(LE_SHORT, 5) & 0xffff;
        long count = Integer.toUnsignedLong(m.get(LE_INT, 7));
        long slot = Integer.toUnsignedLong(m.get(LE_INT, 11));
        boolean read = false;
        int ringIndex = -1;
        if (to != null) {
            synchronized (to.replying) {
                ringIndex = freeRingBuffer(to, down);
            }
        }
        MemorySegment data = ringIndex < 0 ? down.spare : down.ring[ringIndex];
        if (to != null && windowFd >= 0 && count <= Math.min(data.byteSize(), WINDOW_SLOT)) {
            try {
                long sectors = (count + SECTOR - 1) / SECTOR * SECTOR;
                RelayIo.preadFully(windowFd, data, sectors, slot * WINDOW_SLOT, down.st);
                read = true;
            } catch (RuntimeException e) {
                if (windowFailures++ == 0) {
                    Log.info("workspace relay: cannot read the read window (" + e.getMessage() + "); the read fails");
                }
            }
        }
        giveBack(m, down);
        if (to == null) {
            return;
        }
        MemorySegment h = down.header;
        synchronized (to.replying) { // the header and its data together: the up thread puts Rclunks
            if (read) {
                head(h, P9_READ_HEADER + count, RREAD, tag);
                h.set(LE_INT, 7, (int) count);
                if (put(to, h, false, down.iov, down.pollfd, down.st)
                        && put(to, data.asSlice(0, count), ringIndex >= 0, down.iov, down.pollfd, down.st)
                        && ringIndex >= 0) {
                    down.ends[ringIndex] = to.written;
                }
            } else {
                head(h, P9_READ_HEADER, RLERROR, tag);
                h.set(LE_INT, 7, Libc.EIO);
                put(to, h, false, down.iov, down.pollfd, down.st);
            }
        }
    }

    /**
     * The ring's next buffer if the kernel has read everything spliced from
     * it into {@code to}'s replies (the pipe still refers to it until then),
     * else -1. Call holding {@code to.replying}: what the pipe holds and
     * what went into it are read together.
     */
    private static int freeRingBuffer(Connection to, Down down) {
        int i = down.next;
        if (down.ringOwner != to) {
            down.ringOwner = to; // a new connection: the old pipe is read no more, whatever it refers to
            java.util.Arrays.fill(down.ends, 0);
        } else if (down.ends[i] > 0) {
            try {
                long consumed = to.written - RelayIo.unread(to.replies, down.count, down.st);
                if (consumed < down.ends[i]) {
                    return -1;
                }
            } catch (RuntimeException e) {
                return -1; // detached meanwhile
            }
        }
        down.next = (i + 1) % down.ring.length;
        down.ends[i] = 0;
        return i;
    }

    /** Treturn: the slot of Rreadw {@code m} may be written again. */
    private void giveBack(MemorySegment m, Down down) {
        MemorySegment r = down.treturn;
        head(r, TRETURN_SIZE, TRETURN, NOTAG);
        r.set(LE_INT, 7, m.get(LE_INT, 11));
        r.set(LE_INT, 11, m.get(LE_INT, 15));
        synchronized (portLock) {
            Posix.writeAll(portFd, r, TRETURN_SIZE, down.st);
        }
    }

    /** Writes a 9p message's header into {@code m}: size[4] type[1] tag[2]. */
    private static void head(MemorySegment m, long size, int type, int tag) {
        m.set(LE_INT, 0, (int) size);
        m.set(ValueLayout.JAVA_BYTE, 4, (byte) type);
        m.set(LE_SHORT, 5, (short) tag);
    }

    /** Puts whole messages {@code data}, copied, into the replies of {@code to} (nothing when null). */
    private static boolean put(Connection to, MemorySegment data, Down down) {
        if (to == null || data.byteSize() == 0) {
            return to != null;
        }
        synchronized (to.replying) {
            return put(to, data, false, down.iov, down.pollfd, down.st);
        }
    }

    /**
     * Puts {@code data} into the replies of {@code to} (nothing when null),
     * copied or, with {@code splice}, referred to ({@code iov} is then its
     * iovec); waits while the pipe is full, but not past a detach. False if
     * not all of it went. Call holding {@code to.replying}.
     */
    private static boolean put(Connection to, MemorySegment data, boolean splice, MemorySegment iov,
            MemorySegment pollfd, MemorySegment st) {
        if (to == null) {
            return false;
        }
        long off = 0;
        long length = data.byteSize();
        try {
            while (off < length) {
                if (to.closed) {
                    return false;
                }
                long n = splice ? RelayIo.vmsplice(to.replies, data.asSlice(off), length - off, iov, st)
                        : RelayIo.writeSome(to.replies, data.asSlice(off), length - off, st);
                if (n == 0) {
                    RelayIo.awaitWritable(to.replies, 100, pollfd, st);
                    continue;
                }
                off += n;
                to.written += n;
            }
            return true;
        } catch (RuntimeException e) {
            if (!to.closed) {
                Log.info("workspace relay: the mount's connection is gone (" + e.getMessage() + ")");
            }
            return false;
        }
    }

    /** Where the first Rversion starts among the whole messages of {@code buf}, or -1 if none is there. */
    private static long afterStaleReplies(MemorySegment buf, long length) {
        long off = 0;
        while (length - off >= 7) {
            long size = Integer.toUnsignedLong(buf.get(LE_INT, off));
            if (size < 7 || off + size > length) {
                return -1; // unframed bytes: not an answer to anything the new mount asked
            }
            if ((buf.get(ValueLayout.JAVA_BYTE, off + 4) & 0xff) == RVERSION
                    && (buf.get(LE_SHORT, off + 5) & 0xffff) == NOTAG) {
                return off;
            }
            off += size;
        }
        return -1;
    }

    /**
     * How many leading bytes of {@code buf} are whole 9p messages. A size
     * field that cannot be 9p (below a header, or larger than the buffer)
     * means the stream is not framed as expected: everything is passed on
     * as it is, and the kernel's client decides.
     */
    private long wholeMessages(MemorySegment buf, long have) {
        long off = 0;
        while (have - off >= 4) {
            long size = Integer.toUnsignedLong(buf.get(LE_INT, off));
            if (size < 7 || size > bufferSize) {
                return have;
            }
            if (have - off < size) {
                break;
            }
            off += size;
        }
        return off;
    }
}
