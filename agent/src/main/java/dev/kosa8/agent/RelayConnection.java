package dev.kosa8.agent;

import java.lang.foreign.MemorySegment;

/**
 * One mount's connection: two pipes. The kernel holds the write end of the
 * requests and the read end of the replies; the relay the others. Each of
 * the relay's ends is closed by the one thread that uses it, so a number is
 * never closed under a call that is using it.
 *
 * <p>Pipes rather than a unix socket ({@code trans=unix}), for the large
 * reads: the relay hands the kernel an Rread's data with vmsplice(2), so the
 * pipe refers to the relay's memory and the kernel copies it once, where a
 * socket costs a copy into the socket's buffers first (and, with its small
 * send buffer, several wake-ups per MiB). Each pipe is sized beyond a whole
 * message, so a message goes in and out in one call.
 */
final class RelayConnection {
    /** Read end of the requests: read by this connection's up pump, which closes it when it ends. */
    final int requests;
    /** Write end of the requests, the kernel's {@code wfdno}; kept to wake the up pump when detached. */
    final int kernelWrites;
    /**
     * Write end of the replies, non-blocking: written by both pumps under {@link #replying}, and
     * once retired closed by the port's reader under it too (a put checks {@link #closed} under it).
     */
    final int replies;
    /** Read end of the replies, the kernel's {@code rfdno}: the relay's copy goes once the mount has it. */
    private int kernelReads;
    /** Set under the port's lock ({@link RelayPort#close}): then nothing more of this connection goes to the port. */
    volatile boolean closed;
    /** Bytes put into the replies so far. Guarded by {@link #replying}. */
    long written;
    /** Held while whole messages go into the replies: both pumps put some there. */
    final Object replying = new Object();
    /** Whether the host takes quiet clunks: set by the port's reader when its Rquiet comes. */
    volatile boolean quiet;
    /** Where this mount's Tquiet is: not sent, sent, or answered (either way). The port's reader's alone. */
    int quietAsked;

    private RelayConnection(int requests, int kernelWrites, int replies, int kernelReads) {
        this.requests = requests;
        this.kernelWrites = kernelWrites;
        this.replies = replies;
        this.kernelReads = kernelReads;
    }

    /**
     * Makes the pipes of a new connection for messages of at most
     * {@code bufferSize} bytes, the replies' large enough for
     * {@code splicedReplies} spliced Rreads and the replies between them.
     */
    static RelayConnection open(int bufferSize, int splicedReplies) {
        // a pipe of twice the largest message: a whole one goes in with one call, and the next can follow
        int[] requests = RelayIo.pipe(2 * bufferSize);
        int[] replies;
        try {
            // room for every Rread of the ring (a page a slot) and the replies between them
            replies = RelayIo.pipe((splicedReplies + 2) * bufferSize);
            RelayIo.setNonBlocking(replies[1]);
        } catch (RuntimeException e) {
            Posix.close(requests[0]);
            Posix.close(requests[1]);
            throw e;
        }
        return new RelayConnection(requests[0], requests[1], replies[1], replies[0]);
    }

    /** The mount options that hand the kernel its ends of the pipes. */
    synchronized String mountOptions() {
        return "trans=fd,rfdno=" + kernelReads + ",wfdno=" + kernelWrites;
    }

    /** The kernel holds its end of the replies now (or the mount failed): the relay's copy goes. */
    synchronized void closeKernelReads() {
        if (kernelReads >= 0) {
            Posix.close(kernelReads);
            kernelReads = -1;
        }
    }

    /** Puts whole messages {@code data}, copied, into the replies. */
    void putWhole(MemorySegment data, RelayScratch scratch) {
        if (data.byteSize() == 0) {
            return;
        }
        synchronized (replying) {
            put(data, false, scratch);
        }
    }

    /**
     * Puts {@code data} into the replies, copied or, with {@code splice},
     * referred to (the scratch's iovec then describes it); waits while the
     * pipe is full, but not past a detach. False if not all of it went.
     * Call holding {@link #replying}.
     */
    boolean put(MemorySegment data, boolean splice, RelayScratch scratch) {
        long off = 0;
        long length = data.byteSize();
        try {
            while (off < length) {
                if (closed) {
                    return false;
                }
                long n = splice
                        ? RelayIo.vmsplice(replies, data.asSlice(off), length - off, scratch.iov(), scratch.st())
                        : RelayIo.writeSome(replies, data.asSlice(off), length - off, scratch.st());
                if (n == 0) {
                    RelayIo.awaitWritable(replies, 100, scratch.pollfd(), scratch.st());
                    continue;
                }
                off += n;
                written += n;
            }
            return true;
        } catch (RuntimeException e) {
            if (!closed) {
                Log.info("workspace relay: the mount's connection is gone (" + e.getMessage() + ")");
            }
            return false;
        }
    }
}
