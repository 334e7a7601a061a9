package dev.kosa8.files;

import dev.kosa8.protocol.Message;
import java.nio.charset.StandardCharsets;

/**
 * The paths a caller may name: absolute guest paths, without NUL, at most {@link #MAX_PATH} bytes, each name at
 * most {@link #MAX_NAME}: what Linux itself allows (PATH_MAX, NAME_MAX), checked before anything reaches the guest.
 * Paths are not resolved here: {@code ..} and symbolic links mean in the guest what they mean to any guest program,
 * the whole guest being the sandbox's to use.
 */
public final class FilePaths {
    public static final int MAX_PATH = 4095;
    public static final int MAX_NAME = 255;

    private FilePaths() {
    }

    /** The path, checked; a {@link FileOpException} ({@code INVALID} or {@code TOO_LONG}) says what is wrong. */
    public static String check(String path) {
        if (path == null || path.isEmpty()) {
            throw new FileOpException(Message.ErrorCode.INVALID, "no path given: name an absolute guest path");
        }
        if (path.indexOf('\0') >= 0) {
            throw new FileOpException(Message.ErrorCode.INVALID, "the path contains a NUL character");
        }
        if (!path.startsWith("/")) {
            throw new FileOpException(Message.ErrorCode.INVALID, "the path must be absolute (start with /): " + path);
        }
        int bytes = path.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_PATH) {
            throw new FileOpException(Message.ErrorCode.TOO_LONG, "the path is " + bytes + " bytes long, more than "
                    + MAX_PATH);
        }
        for (String name : path.split("/")) {
            if (name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME) {
                throw new FileOpException(Message.ErrorCode.TOO_LONG, "a name in the path is longer than " + MAX_NAME
                        + " bytes: " + name.substring(0, 40) + "...");
            }
        }
        return path;
    }

    /** A user to own what is made: a name or uid in the guest, or empty (root). */
    public static String checkUser(String user) {
        if (user == null) {
            return "";
        }
        if (user.length() > MAX_NAME || !user.matches("[A-Za-z0-9_.][A-Za-z0-9_.@$-]*|")) {
            throw new FileOpException(Message.ErrorCode.INVALID, "'" + user + "' is not a user name or uid");
        }
        return user;
    }
}
