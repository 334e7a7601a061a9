package dev.kosa8.it;

import java.time.Duration;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * When the test run ends: removes every sandbox the tests left and stops the
 * tests' daemon, so no QEMU or daemon outlives the run. `.ci/run` checks that
 * no process still names the tests' kosa8 home.
 */
public final class CleanUpAfterAllTests implements LauncherSessionListener {
    @Override
    public void launcherSessionClosed(LauncherSession session) {
        if (!java.nio.file.Files.exists(Kosa.JAR) || !java.nio.file.Files.exists(Kosa.HOME.resolve("run"))) {
            return;
        }
        Kosa.Result ids = Kosa.run(Duration.ofMinutes(1), "ls", "-q");
        for (String id : ids.stdout().strip().split("\\s+")) {
            if (!id.isBlank()) {
                Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
            }
        }
        Kosa.run(Duration.ofMinutes(1), "daemon", "stop");
    }
}
