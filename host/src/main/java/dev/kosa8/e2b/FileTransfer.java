package dev.kosa8.e2b;

import dev.kosa8.files.FileOpException;
import dev.kosa8.files.WriteOptions;
import dev.kosa8.processes.Guest;
import dev.kosa8.protocol.FileStat;
import dev.kosa8.protocol.Message;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.zip.GZIPInputStream;

/**
 * envd's {@code GET /files} (a download) and {@code POST /files} (an upload: multipart/form-data, or
 * application/octet-stream, gzip-encoded or not), through the agent's GetFile and PutFile: streamed both ways,
 * the guest credited only as the client takes a download. A relative path is the user's home's; a path with a
 * NUL or a {@code ..} part is refused. A written file's missing directories are made, and it and they are the
 * user's, as envd leaves them.
 */
final class FileTransfer {
    private final E2bBackend backend;

    FileTransfer(E2bBackend backend) {
        this.backend = backend;
    }

    void handle(Exchange x, E2bSandbox s, String authUser) throws IOException {
        String user = x.param("username");
        if (user == null || user.isEmpty()) {
            user = authUser.isEmpty() ? s.defaultUser : authUser;
        }
        checkUser(user);
        switch (x.method.name()) {
            case "GET" -> download(x, s, user);
            case "POST" -> upload(x, s, user);
            default -> throw new ApiError(405, "/files takes GET and POST");
        }
    }

    static void checkUser(String user) {
        if (!user.matches("[a-z_][a-z0-9_-]{0,31}")) {
            throw ApiError.badRequest("not a user name: " + Json.quote(user));
        }
    }

    /** The absolute guest path for {@code path}, or a 400 for one that escapes or is malformed. */
    static String resolve(String path, String user) {
        if (path == null || path.isEmpty()) {
            throw ApiError.badRequest("\"path\" is required");
        }
        if (path.indexOf('\0') >= 0 || path.length() > 4096) {
            throw ApiError.badRequest("a path has no NUL and is at most 4096 bytes");
        }
        String abs = path.startsWith("/") ? path : E2bSandbox.home(user) + "/" + path;
        List<String> parts = new ArrayList<>();
        for (String p : abs.split("/+")) {
            if (p.equals("..")) {
                throw ApiError.badRequest("a path may not go up with \"..\": " + Json.quote(path));
            }
            if (!p.isEmpty() && !p.equals(".")) {
                parts.add(p);
            }
        }
        if (parts.isEmpty()) {
            throw ApiError.badRequest("\"/\" is a directory, not a file");
        }
        return "/" + String.join("/", parts);
    }

    private void download(Exchange x, E2bSandbox s, String user) {
        String path = resolve(x.param("path"), user);
        Guest g = backend.guest(s.id);
        try {
            GuestCalls.get(g, path, new GuestCalls.Sink() {
                @Override
                public void begin(long size, int mode) {
                    var h = new DefaultHttpHeaders();
                    String name = path.substring(path.lastIndexOf('/') + 1).replace("\"", "");
                    h.set("Content-Disposition", "attachment; filename=\"" + name + "\"");
                    x.start(200, "application/octet-stream", size, h);
                }

                @Override
                public void write(byte[] bytes) {
                    if (!x.open()) {
                        throw new IllegalStateException("the client went");
                    }
                    x.write(bytes);
                }
            });
            x.end();
        } catch (GuestCalls.Refused e) {
            if (x.started()) {
                x.abort();
                return;
            }
            throw refusal(e, path);
        } catch (IllegalStateException e) {
            x.abort();
        }
    }

    private static ApiError refusal(GuestCalls.Refused e, String path) {
        return switch (e.code) {
            case NOT_FOUND -> ApiError.notFound("path " + path + " not found: " + e.getMessage());
            case PERMISSION -> new ApiError(403, e.getMessage());
            case INVALID, IS_DIRECTORY, NOT_DIRECTORY, TOO_LONG -> ApiError.badRequest(e.getMessage());
            case NO_SPACE -> new ApiError(507, e.getMessage());
            default -> new ApiError(500, e.getMessage());
        };
    }

    private void upload(Exchange x, E2bSandbox s, String user) throws IOException {
        String type = x.headers.get("Content-Type", "").toLowerCase(Locale.ROOT);
        String encoding = x.headers.get("Content-Encoding", "identity").strip().toLowerCase(Locale.ROOT);
        if (!encoding.equals("identity") && !encoding.equals("gzip")) {
            throw ApiError.badRequest("Content-Encoding is gzip or none, not " + Json.quote(encoding));
        }
        InputStream body = x.body;
        if (encoding.equals("gzip")) {
            try {
                body = new GZIPInputStream(body, 64 * 1024);
            } catch (IOException e) {
                throw ApiError.badRequest("the body is not gzip: " + e.getMessage());
            }
        }
        List<Map<String, String>> written = new ArrayList<>();
        if (type.startsWith("multipart/form-data")) {
            Multipart mp = new Multipart(body, Multipart.boundary(x.headers.get("Content-Type")));
            String single = x.param("path");
            Multipart.Part part;
            while ((part = mp.next()) != null) {
                if (part.filename() == null && !"file".equals(part.name())) {
                    continue; // a form field, not a file
                }
                String name = single != null && !single.isEmpty() ? single : part.filename();
                written.add(write(s, resolve(name, user), user, part.content()));
            }
            if (written.isEmpty()) {
                throw ApiError.badRequest("the multipart body has no file part");
            }
        } else if (type.startsWith("application/octet-stream")) {
            written.add(write(s, resolve(x.param("path"), user), user, body));
        } else {
            throw ApiError.badRequest("an upload is multipart/form-data or application/octet-stream, not "
                    + Json.quote(type));
        }
        x.json(200, written);
    }

    private Map<String, String> write(E2bSandbox s, String path, String user, InputStream content) {
        FileStat st;
        try {
            st = backend.files().write(backend.fileGuest(s.id), path, content,
                    new WriteOptions(0644, root(user) ? "" : user, true));
        } catch (FileOpException e) {
            throw new ApiError(switch (e.code()) {
                case NOT_FOUND -> 404;
                case PERMISSION -> 403;
                case NO_SPACE -> 507;
                case LIMIT, RESOURCES, INTERNAL -> 500;
                default -> 400;
            }, "cannot write " + path + ": " + e.getMessage());
        }
        return Map.of("name", st.name(), "type", "file", "path", st.path());
    }

    private static boolean root(String user) {
        return user.equals("root");
    }

    static Message.ErrorCode code(GuestCalls.Refused e) {
        return e.code;
    }
}
