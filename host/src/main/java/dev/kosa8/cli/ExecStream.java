package dev.kosa8.cli;

import dev.kosa8.client.DaemonConnection;
import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.FrameReader;
import dev.kosa8.protocol.FrameWriter;
import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.SendWindow;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * Drives one exec over an upgraded daemon connection: sends the Exec, streams
 * stdin (if asked) within the agent's credit, writes stdout and stderr as they
 * come and credits them back once written, forwards signals and terminal
 * resizes, and returns the process's exit code.
 */
final class ExecStream {
    static final int CH = 1;
    /** Exit codes when the command could not run at all, as shells use them. */
    static final int EXIT_NOT_FOUND = 127;
    static final int EXIT_CANNOT_RUN = 126;
    /** 128 + SIGPIPE: what a shell reports when a command's reader went away. */
    static final int EXIT_BROKEN_PIPE = 141;

    private final DaemonConnection.Stream stream;
    private final FrameWriter writer;
    private final FrameReader reader;
    private final SendWindow stdinWindow = new SendWindow();

    ExecStream(DaemonConnection.Stream stream) {
        this.stream = stream;
        this.writer = new FrameWriter(new BufferedOutputStream(stream.out(), 1 << 17));
        this.reader = new FrameReader(new BufferedInputStream(stream.in(), 1 << 18));
    }

    void send(Message m) {
        try {
            writer.write(m);
        } catch (IOException e) {
            // the daemon went away; the read loop reports it
        }
    }

    /** Streams {@code in} as the process's stdin on a background thread, then sends Eof. */
    void pumpStdin(InputStream in) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[Limits.MAX_DATA];
            try {
                while (true) {
                    int allowed = stdinWindow.acquire(buf.length);
                    if (allowed < 0) {
                        return;
                    }
                    int n = in.read(buf, 0, allowed);
                    if (n < allowed) {
                        int unused = allowed - Math.max(n, 0);
                        if (unused > 0) {
                            stdinWindow.credit(unused);
                        }
                    }
                    if (n < 0) {
                        break;
                    }
                    if (n > 0) {
                        send(new Message.Data(CH, Message.Stream.STDIN, java.util.Arrays.copyOf(buf, n)));
                    }
                }
            } catch (IOException | InterruptedException e) {
                // stdin closed or broken: end it
            }
            send(new Message.Eof(CH, Message.Stream.STDIN));
        }, "stdin");
        t.setDaemon(true);
        t.start();
    }

    /**
     * Reads until the command ends.
     *
     * @return the command's exit code
     */
    int await(OutputStream out, OutputStream err, FileSink fileSink) {
        try {
            Message m;
            while ((m = reader.read()) != null) {
                switch (m) {
                    case Message.Data d -> {
                        OutputStream target = d.stream() == Message.Stream.STDERR ? err : out;
                        if (fileSink != null) {
                            fileSink.write(d.bytes());
                        } else {
                            try {
                                target.write(d.bytes());
                                target.flush();
                            } catch (IOException e) {
                                // our reader went away (`kosa8 run -- yes | head -1`): end as a shell
                                // pipeline does; closing the stream hangs the guest's process up
                                return EXIT_BROKEN_PIPE;
                            }
                        }
                        send(new Message.Credit(CH, d.stream(), d.bytes().length));
                    }
                    case Message.Credit c -> stdinWindow.credit(c.bytes());
                    case Message.Exited x -> {
                        stdinWindow.close();
                        return x.exitCode();
                    }
                    case Message.Failed f -> {
                        stdinWindow.close();
                        throw failure(f);
                    }
                    case Message.FileInfo f -> {
                        if (fileSink != null) {
                            fileSink.info(f.size(), f.mode());
                        }
                    }
                    default -> {
                        // Started, Eof: nothing to do
                    }
                }
            }
            throw new KosaException(KosaException.Kind.DAEMON, "the connection to kosa8d ended before the command did",
                    "see the daemon log; `kosa8 ls` shows whether the sandbox still runs");
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.DAEMON, "lost the connection to kosa8d: " + e.getMessage(),
                    "see the daemon log; `kosa8 ls` shows whether the sandbox still runs", e);
        } finally {
            try {
                stream.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    static KosaException failure(Message.Failed f) {
        return switch (f.code()) {
            case NOT_FOUND -> KosaException.withExitCode(KosaException.Kind.USAGE, f.message(),
                    "check the program's name; the sandbox's PATH is " + "/usr/local/bin:/usr/bin:/bin (and sbin)",
                    EXIT_NOT_FOUND);
            case PERMISSION -> KosaException.withExitCode(KosaException.Kind.STATE, f.message(), "", EXIT_CANNOT_RUN);
            default -> new KosaException(KosaException.Kind.VM, f.message(), "");
        };
    }

    /** Where a download's bytes go. */
    interface FileSink {
        void info(long size, int mode) throws IOException;

        void write(byte[] bytes) throws IOException;
    }
}
