package dev.kosa8.cli;

import dev.kosa8.host.AtomicFile;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts kosa8d in the background: the same Java and the same jar as this
 * CLI, in its own session ({@code setsid}) so a Ctrl-C in the user's terminal
 * never reaches it, with its output appended to the daemon log.
 */
final class DaemonLauncher {
    private DaemonLauncher() {
    }

    /**
     * The daemon runs from a copy of the jar named by its build, never from
     * the build output itself: rebuilding kosa8 replaces that file, and a JVM
     * whose jar changes under it fails to load classes.
     */
    static String stableCopy(HostPaths paths, String classpath) {
        Path jar = Path.of(classpath);
        if (!classpath.endsWith(".jar") || !Files.isRegularFile(jar)) {
            return classpath; // running from classes (tests in an IDE): nothing to protect
        }
        try {
            Path dir = paths.data().resolve("daemon");
            Files.createDirectories(dir);
            Path copy = dir.resolve("kosa8-" + Main.build() + ".jar");
            if (!Files.exists(copy)) {
                AtomicFile.write(copy, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"),
                        out -> Files.copy(jar, out));
            }
            try (var old = Files.newDirectoryStream(dir, "kosa8-*.jar")) {
                for (Path p : old) {
                    if (!p.equals(copy)) {
                        Files.deleteIfExists(p); // a running older daemon keeps its open file
                    }
                }
            }
            return copy.toString();
        } catch (IOException e) {
            return classpath;
        }
    }

    static void launch(HostPaths paths) {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        String classpath = stableCopy(paths, System.getProperty("java.class.path"));
        List<String> argv = new ArrayList<>();
        if (new File("/usr/bin/setsid").canExecute()) {
            argv.addAll(List.of("/usr/bin/setsid", "-f"));
        }
        // memory given back when quiet (docs/limits.md, "The daemon's own memory"): the heap starts at 32 MiB, its
        // young generation at 24 of it, and grows as the work needs (the JVM's default start, 1/64 of the machine's
        // memory, is a floor the serial collector never shrinks below); a full collection shrinks it at once, not in
        // four damped steps, and daemon.HeapTrim asks for one when the daemon is quiet; the C library's free memory
        // is trimmed each minute
        argv.addAll(List.of(java, "-XX:+UseSerialGC", "-Xms32m", "-XX:NewSize=24m", "-XX:-ShrinkHeapInSteps",
                "-XX:TrimNativeHeapInterval=60000", "-Xss512k",
                "--enable-native-access=ALL-UNNAMED",
                // aircompressor's pure-Java zstd (image.oci.LayerStream) reads arrays through sun.misc.Unsafe
                "--sun-misc-unsafe-memory-access=allow", "-Dkosa8.build=" + Main.build(), "-cp", classpath, "dev.kosa8.daemon.DaemonMain"));
        try {
            Files.createDirectories(paths.daemonLog().getParent());
            ProcessBuilder pb = new ProcessBuilder(argv)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(paths.daemonLog().toFile()));
            pb.start();
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.DAEMON, "cannot start kosa8d: " + e.getMessage(),
                    "check that " + java + " runs", e);
        }
    }
}
