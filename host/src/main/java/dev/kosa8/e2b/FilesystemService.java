package dev.kosa8.e2b;

import dev.kosa8.files.FileOpException;
import dev.kosa8.files.FileWatch;
import dev.kosa8.files.WatchBatch;
import dev.kosa8.protocol.FileStat;
import dev.kosa8.protocol.WatchEvent;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * envd's {@code filesystem.Filesystem} service over the daemon's guest file operations ({@code files.GuestFiles}):
 * Stat, ListDir (with depth), MakeDir (already there: already_exists, which the SDK answers false), Remove (with
 * what is in it), Move, WatchDir as a stream, and the watcher calls the Python SDK makes (CreateWatcher,
 * GetWatcherEvents, RemoveWatcher). A relative path is the user's home's; what MakeDir makes is the user's.
 */
final class FilesystemService {
    /** The most events one GetWatcherEvents answers. */
    static final int MAX_EVENTS = 1000;

    private final E2bBackend backend;

    FilesystemService(E2bBackend backend) {
        this.backend = backend;
    }

    void call(String method, E2bSandbox s, ConnectCall c, String user) throws IOException {
        String u = user.isEmpty() ? s.defaultUser : user;
        Json req = c.request();
        var files = backend.files();
        try {
            switch (method) {
                case "Stat" -> c.reply(Map.of("entry", entry(files.stat(guest(s), path(req, "path", u), false))));
                case "ListDir" -> {
                    int depth = (int) req.number("depth", 1, 0, 64);
                    List<Object> out = new ArrayList<>();
                    for (FileStat f : files.list(guest(s), path(req, "path", u), Math.max(1, depth),
                            files.limits().listEntries()).entries()) {
                        out.add(entry(f));
                    }
                    c.reply(Map.of("entries", out));
                }
                case "MakeDir" -> c.reply(Map.of("entry", entry(files.makeDir(guest(s), path(req, "path", u),
                        u.equals("root") ? "" : u, false))));
                case "Remove" -> {
                    files.remove(guest(s), path(req, "path", u), true);
                    c.reply(Map.of());
                }
                case "Move" -> c.reply(Map.of("entry", entry(files.rename(guest(s), path(req, "source", u),
                        path(req, "destination", u), true))));
                case "WatchDir" -> watchDir(s, c, req, u);
                case "CreateWatcher" -> {
                    refuseWatchOptions(req);
                    FileWatch w = files.watch(s.id, guest(s), path(req, "path", u), req.bool("recursive", false));
                    c.reply(Map.of("watcherId", w.id()));
                }
                case "GetWatcherEvents" -> {
                    String id = watcherId(req);
                    FileWatch w = files.watch(s.id, id);
                    WatchBatch b = files.poll(s.id, id, MAX_EVENTS, Duration.ZERO);
                    c.reply(Map.of("events", events(w.path(), b)));
                }
                case "RemoveWatcher" -> {
                    files.unwatch(s.id, watcherId(req));
                    c.reply(Map.of());
                }
                default -> throw new ConnectError(ConnectError.Code.UNIMPLEMENTED, "filesystem.Filesystem has no"
                        + " method " + Json.quote(method));
            }
        } catch (FileOpException e) {
            throw error(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ConnectError(ConnectError.Code.CANCELED, "interrupted");
        }
    }

    private dev.kosa8.files.FileGuest guest(E2bSandbox s) {
        return backend.fileGuest(s.id);
    }

    private void watchDir(E2bSandbox s, ConnectCall c, Json req, String user) throws InterruptedException {
        if (!c.streaming) {
            throw ConnectError.invalid("WatchDir is a server stream: send application/connect+json");
        }
        refuseWatchOptions(req);
        String path = path(req, "path", user);
        var files = backend.files();
        FileWatch w = files.watch(s.id, guest(s), path, req.bool("recursive", false));
        try {
            c.send(Map.of("start", Map.of()));
            while (c.x.open()) {
                WatchBatch b = w.poll(MAX_EVENTS, Duration.ofSeconds(keepalive(c)));
                List<Map<String, Object>> events = events(path, b);
                for (Map<String, Object> e : events) {
                    c.send(Map.of("filesystem", e));
                }
                if (b.ended()) {
                    c.end(b.reason().isEmpty() ? null : new ConnectError(ConnectError.Code.ABORTED,
                            "the watch of " + path + " ended: " + b.reason()));
                    return;
                }
                if (events.isEmpty()) {
                    c.send(Map.of("keepalive", Map.of()));
                }
            }
        } finally {
            try {
                files.unwatch(s.id, w.id());
            } catch (FileOpException ignored) {
                // already gone
            }
        }
    }

    private static void refuseWatchOptions(Json req) {
        if (req.bool("includeEntry", false) || req.bool("allowNetworkMounts", false)) {
            throw new ConnectError(ConnectError.Code.UNIMPLEMENTED, "includeEntry and allowNetworkMounts need envd"
                    + " 0.6.3 and 0.6.4; this listener serves " + ControlPlane.ENVD_VERSION);
        }
    }

    private static long keepalive(ConnectCall c) {
        String k = c.x.headers.get("Keepalive-Ping-Interval");
        if (k != null && k.matches("[0-9]{1,6}")) {
            return Math.max(1, Math.min(60, Long.parseLong(k)));
        }
        return 50;
    }

    /** The events as envd sends them: each name relative to the watched directory; an overflow is left out. */
    static List<Map<String, Object>> events(String dir, WatchBatch b) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (WatchEvent e : b.events()) {
            if (e.kind() == WatchEvent.Kind.OVERFLOW) {
                continue;
            }
            String name = e.path().startsWith(dir + "/") ? e.path().substring(dir.length() + 1)
                    : dir.equals("/") ? e.path().substring(1) : e.path();
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("name", name);
            v.put("type", "EVENT_TYPE_" + e.kind().name());
            out.add(v);
        }
        return out;
    }

    private static String watcherId(Json req) {
        String id = req.string("watcherId", "");
        if (id.isEmpty()) {
            throw ConnectError.invalid("\"watcherId\" is required");
        }
        return id;
    }

    private static String path(Json req, String field, String user) {
        String p = req.string(field, "");
        if (p.isEmpty()) {
            throw ConnectError.invalid("\"" + field + "\" is required");
        }
        try {
            return p.equals("/") ? "/" : FileTransfer.resolve(p, user);
        } catch (ApiError e) {
            throw ConnectError.invalid(e.getMessage());
        }
    }

    /** envd's EntryInfo, as protobuf's JSON writes it (64-bit size as a string). */
    static Map<String, Object> entry(FileStat f) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("name", f.name());
        v.put("type", switch (f.type()) {
            case FILE -> "FILE_TYPE_FILE";
            case DIRECTORY -> "FILE_TYPE_DIRECTORY";
            case SYMLINK -> "FILE_TYPE_SYMLINK";
            default -> "FILE_TYPE_UNSPECIFIED";
        });
        v.put("path", f.path());
        v.put("size", Long.toString(f.size()));
        v.put("mode", f.mode());
        v.put("permissions", permissions(f));
        v.put("owner", f.owner());
        v.put("group", f.group());
        v.put("modifiedTime", Instant.ofEpochMilli(f.mtimeMillis()).toString());
        if (!f.symlinkTarget().isEmpty()) {
            v.put("symlinkTarget", f.symlinkTarget());
        }
        return v;
    }

    /** {@code drwxr-xr-x}, as Go's FileMode prints it. */
    static String permissions(FileStat f) {
        StringBuilder b = new StringBuilder();
        b.append(switch (f.type()) {
            case DIRECTORY -> 'd';
            case SYMLINK -> 'L';
            default -> '-';
        });
        String rwx = "rwxrwxrwx";
        for (int i = 0; i < 9; i++) {
            b.append((f.mode() & (1 << (8 - i))) != 0 ? rwx.charAt(i) : '-');
        }
        return b.toString();
    }

    static ConnectError error(FileOpException e) {
        return new ConnectError(switch (e.code()) {
            case NOT_FOUND -> ConnectError.Code.NOT_FOUND;
            case EXISTS -> ConnectError.Code.ALREADY_EXISTS;
            case PERMISSION -> ConnectError.Code.PERMISSION_DENIED;
            case NO_SPACE, LIMIT, RESOURCES -> ConnectError.Code.RESOURCE_EXHAUSTED;
            case INTERNAL -> ConnectError.Code.INTERNAL;
            case REWOUND -> ConnectError.Code.ABORTED;
            default -> ConnectError.Code.INVALID_ARGUMENT;
        }, e.getMessage());
    }
}
