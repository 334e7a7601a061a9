package dev.kosa8.agent;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * How the agent (root) runs a command as another user of the image: the
 * image's own {@code runuser -u USER --} where it has one (Debian, Ubuntu,
 * Fedora...), else kosa8's own static busybox, which every imported image's
 * guest carries at {@code /run/kosa8/busybox}: {@code su -p -s /run/kosa8/sh
 * -c 'exec "$0" "$@"' -- USER PROGRAM ARGS...}. Either sets the user's groups
 * from the image's {@code /etc/group} (initgroups), then its gid and uid, and
 * keeps the environment the agent made. The {@code --} matters: busybox's
 * getopt would otherwise take a {@code -c} among the command's own arguments
 * as su's. {@code /run/kosa8/sh} is a link to busybox made by the guest's init
 * (busybox runs the applet its name says); the trampoline script only execs,
 * so the command's arguments pass through unquoted and unchanged.
 */
final class UserSwitch {
    static final String RUNUSER = "/usr/sbin/runuser";
    static final String BUSYBOX = "/run/kosa8/busybox";
    static final String TRAMPOLINE_SHELL = "/run/kosa8/sh";

    private UserSwitch() {
    }

    /** The program the agent spawns to switch users. */
    static String program() {
        return program(Files.isExecutable(Path.of(RUNUSER)));
    }

    static String program(boolean hasRunuser) {
        return hasRunuser ? RUNUSER : BUSYBOX;
    }

    /** The argv before the command's own (its argv[0] first). */
    static List<String> prefix(String user) {
        return prefix(user, Files.isExecutable(Path.of(RUNUSER)));
    }

    static List<String> prefix(String user, boolean hasRunuser) {
        return hasRunuser ? List.of(RUNUSER, "-u", user, "--")
                : List.of("su", "-p", "-s", TRAMPOLINE_SHELL, "-c", "exec \"$0\" \"$@\"", "--", user);
    }
}
