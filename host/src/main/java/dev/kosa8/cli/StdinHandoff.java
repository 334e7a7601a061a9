package dev.kosa8.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * One reader of this process's stdin for a series of commands, each given a {@link #view} in turn: when a command
 * ends, its view is closed and gives up its reader at once, so the bytes typed next go to the following command and
 * none is lost to a stream that has ended. ({@code kosa8 agent} reopens the agent's session after a rewind; a pump
 * left blocked in {@code System.in.read()} would otherwise eat the user's first keystrokes in the new session.)
 */
final class StdinHandoff {
    private static final byte[] END = new byte[0];
    /** Chunks read ahead of the command (16 KiB each): stdin piped from a large file is not read into memory. */
    private static final int AHEAD = 16;

    private final LinkedBlockingDeque<byte[]> chunks = new LinkedBlockingDeque<>();
    /** Room for chunks read ahead: taken by the reader per chunk, given back when a chunk is read to its end. */
    private final Semaphore room = new Semaphore(AHEAD);

    StdinHandoff(InputStream in) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            try {
                int n;
                while (true) {
                    room.acquire();
                    if ((n = in.read(buf)) < 0) {
                        break;
                    }
                    if (n > 0) {
                        chunks.add(Arrays.copyOf(buf, n));
                    } else {
                        room.release();
                    }
                }
            } catch (IOException e) {
                // stdin broke: the same as its end
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            chunks.add(END);
        }, "stdin-handoff");
        t.setDaemon(true);
        t.start();
    }

    /** A stream of what is typed from now until {@link View#close}, or until stdin ends. */
    View view() {
        return new View();
    }

    final class View extends InputStream {
        private volatile boolean closed;
        private byte[] held;
        private int at;

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public synchronized int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (closed && held != null) {
                chunks.addFirst(Arrays.copyOfRange(held, at, held.length)); // the rest is the next view's
                held = null;
            }
            while (held == null) {
                if (closed) {
                    return -1;
                }
                byte[] c;
                try {
                    c = chunks.poll(50, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException();
                }
                if (c == null) {
                    continue;
                }
                if (c == END) {
                    chunks.addFirst(END); // every later view ends too
                    return -1;
                }
                if (closed) {
                    chunks.addFirst(c); // taken as this view closed: the next one gets it
                    return -1;
                }
                held = c;
                at = 0;
            }
            int n = Math.min(len, held.length - at);
            System.arraycopy(held, at, b, off, n);
            at += n;
            if (at == held.length) {
                held = null;
                room.release();
            }
            return n;
        }

        /**
         * The command this view fed has ended: its reader gets the end of stream, and takes no more; what it took
         * and did not read (a chunk read in part, when the command's window was smaller) goes to the next view,
         * whether or not its reader calls again.
         */
        @Override
        public void close() {
            closed = true; // first, so that a read under way gives up what it takes from now on
            synchronized (this) {
                if (held != null) {
                    chunks.addFirst(Arrays.copyOfRange(held, at, held.length));
                    held = null;
                }
            }
        }
    }
}
