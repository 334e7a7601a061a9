package dev.kosa8.image;

import dev.kosa8.host.KosaException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The JDK kosa8 runs on, whose {@code jlink} makes the guest's Java runtime:
 * the agent runs on the same Java version as the host.
 */
record JavaRuntime(Path home, String version) {

    static JavaRuntime current() {
        return new JavaRuntime(Path.of(System.getProperty("java.home")),
                System.getProperty("java.vendor", "?") + " " + Runtime.version());
    }

    /** The {@code jlink} beside the running {@code java}, or a clear failure listing where it looked. */
    Path jlink() {
        List<Path> tried = new ArrayList<>();
        tried.add(home.resolve("bin/jlink"));
        ProcessHandle.current().info().command()
                .map(java -> Path.of(java).resolveSibling("jlink"))
                .ifPresent(tried::add);
        for (Path p : tried) {
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        throw new KosaException(KosaException.Kind.HOST,
                "no jlink next to the running Java (looked at " + tried + ")",
                "run kosa8 with a full JDK 25, not a JRE: the guest's Java runtime is made with its jlink");
    }
}
