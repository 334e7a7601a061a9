package dev.kosa8.client;

import dev.kosa8.protocol.Message;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * Whole files in a sandbox, by absolute guest path, carried over the agent
 * protocol's file channels (as {@code kosa8 cp} does): no shell, no quoting,
 * any bytes. Files in the workspace folder are the host folder's own.
 */
public final class SandboxFiles {
    private final DaemonConnection daemon;
    private final String sandbox;

    SandboxFiles(DaemonConnection daemon, String sandbox) {
        this.daemon = daemon;
        this.sandbox = sandbox;
    }

    /** Writes {@code bytes} to {@code path} (mode 0644), replacing what was there. */
    public void write(String path, byte[] bytes) {
        write(path, new ByteArrayInputStream(bytes), 0644);
    }

    /** Writes what {@code in} holds, to its end, to {@code path} with {@code mode} (such as {@code 0755}). */
    public void write(String path, InputStream in, int mode) {
        ExecChannel ch = open();
        ch.send(new Message.PutFile(ExecChannel.CH, checked(path), mode));
        ch.pumpStdin(in);
        finish(path, ch, OutputStream.nullOutputStream(), null);
    }

    /** The whole of {@code path}'s content. */
    public byte[] read(String path) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        read(path, out);
        return out.toByteArray();
    }

    /** Streams {@code path}'s content into {@code out}. */
    public void read(String path, OutputStream out) {
        ExecChannel ch = open();
        ch.send(new Message.GetFile(ExecChannel.CH, checked(path)));
        finish(path, ch, out, new ExecChannel.FileSink() {
            @Override
            public void info(long size, int mode) {
                // the bytes follow
            }

            @Override
            public void write(byte[] bytes) throws java.io.IOException {
                out.write(bytes);
            }
        });
    }

    private ExecChannel open() {
        return new ExecChannel(daemon.upgrade("/v1/sandboxes/" + sandbox + "/exec"));
    }

    private static String checked(String path) {
        if (!path.startsWith("/")) {
            throw new InvalidRequestException("'" + path + "' is not an absolute path in the sandbox",
                    "name files by their absolute guest path, such as /root/notes.txt", 2);
        }
        return path;
    }

    private static void finish(String path, ExecChannel ch, OutputStream out, ExecChannel.FileSink sink) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try {
            code = ch.await(out, err, sink);
        } catch (CommandNotStartedException e) {
            throw new InvalidRequestException(path + ": " + e.getMessage(), "check the path in the sandbox", 2);
        }
        if (code != 0) {
            throw new InvalidRequestException(path + ": " + err.toString(java.nio.charset.StandardCharsets.UTF_8).strip(),
                    "check the path in the sandbox", 2);
        }
    }
}
