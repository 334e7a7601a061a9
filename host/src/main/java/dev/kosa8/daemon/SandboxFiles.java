package dev.kosa8.daemon;

import dev.kosa8.files.FileGuest;
import dev.kosa8.files.FileWatch;
import dev.kosa8.files.GuestFiles;
import dev.kosa8.files.Listing;
import dev.kosa8.files.WatchBatch;
import dev.kosa8.files.WriteOptions;
import dev.kosa8.protocol.FileStat;
import dev.kosa8.protocol.Message;
import dev.kosa8.vm.AgentConnection;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * The daemon's door to a sandbox's guest files (docs/api.md, "Files"), for the REST routes ({@link FileRoutes})
 * and any other daemon code: each call runs on the sandbox's running machine, through its agent, and fails with a
 * {@link dev.kosa8.files.FileOpException} whose errno-like {@code code()} says why ({@code NOT_FOUND},
 * {@code EXISTS}, {@code INVALID}, {@code TOO_LONG}, {@code PERMISSION}, {@code LIMIT}, ...), or with a
 * {@link dev.kosa8.host.KosaException} ({@code STATE}) when the sandbox is not running. Paths are absolute guest
 * paths. The agent runs every operation as root; a {@code user} (a guest user name or uid; empty: root) owns what
 * a call makes.
 */
public final class SandboxFiles {
    private final GuestFiles files;

    SandboxFiles(GuestFiles files) {
        this.files = files;
    }

    /** The feature itself, for its limits. */
    public GuestFiles files() {
        return files;
    }

    /** What {@code path} is; {@code follow}: a symbolic link's target rather than the link. */
    public FileStat stat(Sandbox s, String path, boolean follow) {
        return files.stat(guest(s), path, follow);
    }

    /** The entries of a directory down to {@code depth} levels (1: its own), at most {@code maxEntries}. */
    public Listing list(Sandbox s, String path, int depth, int maxEntries) {
        return files.list(guest(s), path, depth, maxEntries);
    }

    /** mkdir -p, owned by {@code user}; {@code existOk} false: a directory already there fails with EXISTS. */
    public FileStat makeDir(Sandbox s, String path, String user, boolean existOk) {
        return files.makeDir(guest(s), path, user, existOk);
    }

    /** Removes a file, link or empty directory; {@code recursive}: rm -r. */
    public void remove(Sandbox s, String path, boolean recursive) {
        files.remove(guest(s), path, recursive);
    }

    /** Renames (moves); a file at {@code to} is replaced only with {@code replace} (else EXISTS). */
    public FileStat rename(Sandbox s, String from, String to, boolean replace) {
        return files.rename(guest(s), from, to, replace);
    }

    /** Writes a whole file from a stream (atomically replaced); its stat. */
    public FileStat write(Sandbox s, String path, InputStream content, WriteOptions options) {
        return files.write(guest(s), path, content, options);
    }

    public FileStat write(Sandbox s, String path, byte[] content, WriteOptions options) {
        return write(s, path, new ByteArrayInputStream(content), options);
    }

    /** Streams a whole regular file to {@code out}; more than {@code maxBytes} fails with LIMIT. Bytes written. */
    public long read(Sandbox s, String path, OutputStream out, long maxBytes) {
        return files.read(guest(s), path, out, maxBytes);
    }

    public byte[] read(Sandbox s, String path, int maxBytes) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        read(s, path, out, maxBytes);
        return out.toByteArray();
    }

    /** Starts a watch, in place when this returns; poll it with {@link FileWatch#poll} or {@link #poll}. */
    public FileWatch watch(Sandbox s, String path, boolean recursive) {
        return files.watch(s.id(), guest(s), path, recursive);
    }

    /** A watch by id (NOT_FOUND when there is none). */
    public FileWatch watch(Sandbox s, String id) {
        return files.watch(s.id(), id);
    }

    public List<FileWatch> watches(Sandbox s) {
        return files.watches(s.id());
    }

    /** Takes a watch's events, waiting up to {@code wait} for the first; an ended, drained watch is forgotten. */
    public WatchBatch poll(Sandbox s, String id, int max, Duration wait) throws InterruptedException {
        return files.poll(s.id(), id, max, wait);
    }

    public void unwatch(Sandbox s, String id) {
        files.unwatch(s.id(), id);
    }

    /** The sandbox is gone: its watches end. */
    void forget(Sandbox s) {
        files.forget(s.id());
    }

    private static FileGuest guest(Sandbox s) {
        return new AgentGuest(s.current().agent());
    }

    /** The agent connection as file operations use it (here and for the E2B listener's, `E2bBridge`). */
    record AgentGuest(AgentConnection agent) implements FileGuest {
        @Override
        public int open(Consumer<Message> listener) {
            return agent.open(listener);
        }

        @Override
        public void send(Message m) {
            agent.send(m);
        }

        @Override
        public void abandon(int channel) {
            agent.abandon(channel);
        }
    }
}
