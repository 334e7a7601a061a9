package dev.kosa8.protocol;

import java.nio.charset.StandardCharsets;

/**
 * The explicit limits of the protocol. A decoder that receives more than any
 * of these refuses the frame instead of allocating for it.
 */
public final class Limits {
    /**
     * Protocol version spoken by this build: raised whenever a message's encoding changes, so that a daemon and
     * an agent of different builds (an image built by an older kosa8, booted through the API) refuse each other
     * at the handshake, saying what to do, instead of misreading frames. 2: {@code PutFile} names an owner, and
     * the file operations' messages (2026-12-05). 3: the network window's messages (2026-12-06). 4: the network window's slots of 256 KiB, 32 of them (2026-12-06).
     */
    public static final int VERSION = 4;
    /** Largest frame, header excluded. */
    public static final int MAX_FRAME = 256 * 1024;
    /** Largest payload of one {@link Message.Data}. */
    public static final int MAX_DATA = 128 * 1024;
    /** Bytes a stream may have in flight before the receiver credits them back. */
    public static final int INITIAL_WINDOW = 1024 * 1024;
    /** Entries in argv or env. */
    public static final int MAX_LIST = 4096;
    /** A path, a user name, a message. */
    public static final int MAX_SHORT_TEXT = 4096;
    /** A turn checkpoint's label, in bytes. */
    public static final int MAX_LABEL = 200;
    /**
     * How long a port of the agent's must read as having no host before the agent counts its host gone and ends
     * the session: the guest's driver can tell of a host's going after that host's next bytes, and of its coming
     * back just after (agent {@code PortInput}). A host that connects again waits longer than this before it
     * speaks, so that the agent drops what an earlier connection left half-sent.
     */
    public static final long HOST_GONE_MILLIS = 1000;
    /** Highest channel number. */
    public static final int MAX_CHANNEL = Integer.MAX_VALUE;

    private Limits() {
    }

    static void checkChannel(int channel) {
        if (channel <= 0) {
            throw new ProtocolException("channel " + channel + " is not a data channel");
        }
    }

    static void checkWindowSize(int rows, int columns) {
        if (rows < 1 || rows > 4096 || columns < 1 || columns > 4096) {
            throw new ProtocolException("terminal size " + rows + "x" + columns + " is out of range");
        }
    }

    /** {@code s} cut to fit a {@link Message.Failed}'s message ({@link #MAX_SHORT_TEXT} bytes), whole characters. */
    public static String fit(String s) {
        int max = MAX_SHORT_TEXT - 16;
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length <= max) {
            return s;
        }
        int end = max;
        while (end > 0 && (b[end] & 0xC0) == 0x80) {
            end--;
        }
        return new String(b, 0, end, StandardCharsets.UTF_8) + "…";
    }

    static String checkText(String what, String s, int maxBytes) {
        if (s == null) {
            return "";
        }
        if (s.getBytes(StandardCharsets.UTF_8).length > maxBytes) {
            throw new ProtocolException(what + " is longer than " + maxBytes + " bytes");
        }
        return s;
    }

    /** A label: one line of printable text, at most {@link #MAX_LABEL} bytes. */
    static String checkLabel(String s) {
        checkText("label", s, MAX_LABEL);
        if (s != null && s.codePoints().anyMatch(Character::isISOControl)) {
            throw new ProtocolException("label contains a control character");
        }
        return s == null ? "" : s;
    }

    static void checkNoNul(String what, String s) {
        if (s.indexOf('\0') >= 0) {
            throw new ProtocolException(what + " contains a NUL character");
        }
    }

    /** A user name or uid: empty (root), or up to {@link FileStat#MAX_NAME} bytes without NUL, ':' or '/'. */
    static String checkUser(String user) {
        user = checkText("user", user, FileStat.MAX_NAME);
        checkNoNul("user", user);
        if (user.indexOf(':') >= 0 || user.indexOf('/') >= 0 || user.indexOf('\n') >= 0) {
            throw new ProtocolException("user '" + user + "' is not a user name");
        }
        return user;
    }

    static String checkPath(String path) {
        checkText("path", path, MAX_SHORT_TEXT);
        checkNoNul("path", path);
        if (!path.startsWith("/")) {
            throw new ProtocolException("path must be absolute: " + path);
        }
        return path;
    }
}
