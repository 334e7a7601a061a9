package dev.kosa8.client;

import dev.kosa8.protocol.Message;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;

/**
 * Files in a sandbox, by absolute guest path: whole files carried over the
 * agent protocol's file channels (as {@code kosa8 cp} does: no shell, no
 * quoting, any bytes, any size), and stat, list, mkdir, remove, rename and
 * watches through the daemon's file endpoints (docs/api.md, "Files"). The
 * agent runs these as root; files in the workspace folder are the host
 * folder's own. A failed operation is a {@link SandboxFileException} with its
 * errno-like code.
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

    /** The stat of {@code path}, not following a final symbolic link. */
    public FileInfo stat(String path) {
        return FileInfo.of(daemon.call("GET", base() + "/stat?path=" + enc(checked(path))));
    }

    /** True when something is at {@code path} (a dangling link counts). */
    public boolean exists(String path) {
        try {
            stat(path);
            return true;
        } catch (SandboxFileException e) {
            if (e.notFound()) {
                return false;
            }
            throw e;
        }
    }

    /** The entries of a directory, {@code depth} levels down (1: its own), a directory before its contents. */
    public List<FileInfo> list(String path, int depth) {
        Object l = daemon.call("GET", base() + "/list?path=" + enc(checked(path)) + "&depth=" + depth);
        return Json.list(Json.get(l, "entries")).stream().map(FileInfo::of).toList();
    }

    /** Makes a directory and its missing parents; false when it was there already. */
    public boolean mkdirs(String path) {
        try {
            daemon.call("POST", base() + "/mkdir?path=" + enc(checked(path)));
            return true;
        } catch (SandboxFileException e) {
            if (e.code().equals("EXISTS") && stat(path).isDirectory()) {
                return false;
            }
            throw e;
        }
    }

    /** Removes a file, link or empty directory; with {@code recursive}, a directory and all in it. */
    public void remove(String path, boolean recursive) {
        daemon.call("DELETE", base() + "?path=" + enc(checked(path)) + "&recursive=" + recursive);
    }

    /** Moves {@code from} to {@code to} (which must not exist); the moved file's stat. */
    public FileInfo rename(String from, String to) {
        return FileInfo.of(daemon.call("POST", base() + "/rename?from=" + enc(checked(from)) + "&to="
                + enc(checked(to))));
    }

    /** Starts watching the directory {@code path} (and, with {@code recursive}, every directory beneath it). */
    public FileWatch watch(String path, boolean recursive) {
        Object w = daemon.call("POST", base() + "/watches?path=" + enc(checked(path)) + "&recursive=" + recursive);
        return new FileWatch(daemon, sandbox, Json.text(w, "id"));
    }

    private String base() {
        return "/v1/sandboxes/" + sandbox + "/files";
    }

    private static String enc(String s) {
        return Sandbox.enc(s);
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
