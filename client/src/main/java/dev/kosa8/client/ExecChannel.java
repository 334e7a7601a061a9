package dev.kosa8.client;

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
 * One agent-protocol stream over an upgraded daemon connection (docs/api.md,
 * {@code /exec}): the caller sends its first frame ({@code Exec},
 * {@code PutFile} or {@code GetFile}) with {@link #send}; this streams stdin
 * (if asked) within the agent's credit, writes stdout and stderr as they come
 * and credits them back once written, carries signals and terminal resizes,
 * and returns the process's exit code. The low-level door under
 * {@link Sandbox#exec} and {@link SandboxFiles}, and the CLI's exec.
 */
public final class ExecChannel {
    /** The channel every stream uses: one stream per connection. */
    public static final int CH = 1;
    /** Exit codes when the command could not run at all, as shells use them. */
    public static final int EXIT_NOT_FOUND = 127;
    public static final int EXIT_CANNOT_RUN = 126;
    /** 128 + SIGPIPE: what a shell reports when a command's reader went away. */
    public static final int EXIT_BROKEN_PIPE = 141;

    private final DaemonConnection.Stream stream;
    private final FrameWriter writer;
    private final FrameReader reader;
    private final SendWindow stdinWindow = new SendWindow();

    public ExecChannel(DaemonConnection.Stream stream) {
        this.stream = stream;
        this.writer = new FrameWriter(new BufferedOutputStream(stream.out(), 1 << 17));
        this.reader = new FrameReader(new BufferedInputStream(stream.in(), 1 << 18));
    }

    /** Sends one frame; a daemon gone away is reported by {@link #await}. */
    public void send(Message m) {
        try {
            writer.write(m);
        } catch (IOException e) {
            // the daemon went away; the read loop reports it
        }
    }

    /** Streams {@code in} as the process's stdin on a background thread, then sends Eof. */
    public void pumpStdin(InputStream in) {
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
     * @param fileSink where a download's bytes go (null for a command)
     * @return the command's exit code
     * @throws CommandNotStartedException if the command could not be started
     * @throws SandboxRewoundException if the sandbox was rewound while the command ran
     * @throws DaemonUnavailableException if the connection broke first
     */
    public int await(OutputStream out, OutputStream err, FileSink fileSink) {
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
            throw new DaemonUnavailableException("the connection to kosa8d ended before the command did",
                    "see the daemon log; `kosa8 ls` shows whether the sandbox still runs", null);
        } catch (IOException e) {
            throw new DaemonUnavailableException("lost the connection to kosa8d: " + e.getMessage(),
                    "see the daemon log; `kosa8 ls` shows whether the sandbox still runs", e);
        } finally {
            try {
                stream.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    /** The agent's refusal as the exception a caller catches. */
    static Kosa8Exception failure(Message.Failed f) {
        return switch (f.code()) {
            case NOT_FOUND -> new CommandNotStartedException(Kosa8Exception.Kind.USAGE, f.message(),
                    "check the program's name; the sandbox's PATH is " + "/usr/local/bin:/usr/bin:/bin (and sbin)",
                    EXIT_NOT_FOUND);
            case PERMISSION -> new CommandNotStartedException(Kosa8Exception.Kind.STATE, f.message(), "",
                    EXIT_CANNOT_RUN);
            case REWOUND -> new SandboxRewoundException(f.message());
            default -> new Kosa8Exception(Kosa8Exception.Kind.VM, f.message(), "", Kosa8Exception.Kind.VM.exitCode(),
                    null);
        };
    }

    /** Where a download's bytes go. */
    public interface FileSink {
        void info(long size, int mode) throws IOException;

        void write(byte[] bytes) throws IOException;
    }
}
