package dev.kosa8.agent;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class UserSwitchTest {

    @Test
    void theImagesRunuserWhereItHasOne() {
        assertThat(UserSwitch.program(true)).isEqualTo("/usr/sbin/runuser");
        assertThat(UserSwitch.prefix("app", true)).containsExactly("/usr/sbin/runuser", "-u", "app", "--");
    }

    @Test
    void elseKosa8sBusyboxSuWithEveryOptionBeforeTheUserAndADoubleDash() {
        assertThat(UserSwitch.program(false)).isEqualTo("/run/kosa8/busybox");
        // argv[0] "su" picks busybox's applet; after "--" nothing is su's: a "-c" in the command stays the command's
        assertThat(UserSwitch.prefix("app", false)).containsExactly("su", "-p", "-s", "/run/kosa8/sh", "-c",
                "exec \"$0\" \"$@\"", "--", "app");
    }
}
