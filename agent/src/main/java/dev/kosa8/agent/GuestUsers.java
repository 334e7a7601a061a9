package dev.kosa8.agent;

import dev.kosa8.protocol.Message;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The guest's users and groups, read from the sandbox root's {@code /etc/passwd} and {@code /etc/group} (as files:
 * the agent runs on a C library of its own, whose name service need not be the root's): names for a stat's owner
 * and group, and the ids a file operation's user owns what it makes as. Read once per operation; files of more than
 * {@link #MAX_FILE} bytes are read no further.
 */
final class GuestUsers {
    static final int MAX_FILE = 4 << 20;

    /** A user's ids: what it owns files as. */
    record Ids(int uid, int gid) {
        static final Ids ROOT = new Ids(0, 0);
    }

    private final Map<Integer, String> userNames = new HashMap<>();
    private final Map<String, Ids> users = new HashMap<>();
    private final Map<Integer, String> groupNames = new HashMap<>();

    private GuestUsers() {
    }

    /** The users and groups of the root at {@code etc}'s parent ({@code /etc} in the guest). */
    static GuestUsers read(Path etc) {
        GuestUsers u = new GuestUsers();
        for (String[] f : fields(etc.resolve("passwd"))) {
            if (f.length >= 4) {
                Integer uid = number(f[2]);
                Integer gid = number(f[3]);
                if (uid != null && gid != null) {
                    u.userNames.putIfAbsent(uid, f[0]);
                    u.users.putIfAbsent(f[0], new Ids(uid, gid));
                }
            }
        }
        for (String[] f : fields(etc.resolve("group"))) {
            if (f.length >= 3) {
                Integer gid = number(f[2]);
                if (gid != null) {
                    u.groupNames.putIfAbsent(gid, f[0]);
                }
            }
        }
        return u;
    }

    static GuestUsers guest() {
        return read(Path.of("/etc"));
    }

    String userName(int uid) {
        return userNames.getOrDefault(uid, "");
    }

    String groupName(int gid) {
        return groupNames.getOrDefault(gid, "");
    }

    /**
     * The ids of a request's user: empty is root; a name must be in {@code /etc/passwd}; a number is that uid, with
     * its passwd group when it has one, else the same number.
     */
    Ids ids(String user) {
        if (user.isEmpty() || user.equals("root")) {
            return Ids.ROOT;
        }
        Ids named = users.get(user);
        if (named != null) {
            return named;
        }
        Integer uid = number(user);
        if (uid != null) {
            String name = userNames.get(uid);
            return name != null ? users.get(name) : new Ids(uid, uid);
        }
        throw new FileOps.Failure(Message.ErrorCode.INVALID, "there is no user '" + user
                + "' in the sandbox's /etc/passwd");
    }

    private static java.util.List<String[]> fields(Path file) {
        try {
            byte[] bytes;
            try (var in = Files.newInputStream(file)) {
                bytes = in.readNBytes(MAX_FILE);
            }
            return new String(bytes, StandardCharsets.UTF_8).lines().filter(l -> !l.startsWith("#"))
                    .map(l -> l.split(":", -1)).toList();
        } catch (IOException e) {
            return java.util.List.of();
        }
    }

    private static Integer number(String s) {
        if (s.isEmpty() || s.length() > 10 || !s.chars().allMatch(Character::isDigit)) {
            return null;
        }
        long n = Long.parseLong(s);
        return n <= Integer.MAX_VALUE ? (int) n : null;
    }
}
