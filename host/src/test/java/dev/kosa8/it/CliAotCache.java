package dev.kosa8.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The CLI's AOT cache for the tests' calls, the one the launcher makes ({@code kosa8}, the script: beside the jar,
 * trained by {@code dev.kosa8.cli.AotTraining} against a stand-in daemon). A jar built by {@code ./run-tests} is
 * newer than any cache, so the first call of a run trains it again here, as the launcher would, under a name of its
 * own and renamed into place. Without a cache (the training failed) the calls run without one, as before.
 */
final class CliAotCache {
    /** The launcher's JVM flags ({@code opts} in the script); an AOT cache is used only under the flags it was made with. */
    static final List<String> LAUNCHER_FLAGS = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k",
            "--enable-native-access=ALL-UNNAMED",
            "-Djava.nio.channels.spi.SelectorProvider=sun.nio.ch.EPollSelectorProvider");
    private static List<String> flags;

    private CliAotCache() {
    }

    /** The flags that use the cache for {@code jar}, trained first if it is missing or older than the jar. */
    static synchronized List<String> flags(String java, Path jar) {
        if (flags == null) {
            Path cache = jar.resolveSibling("kosa8.aot");
            flags = fresh(cache, jar) || train(java, jar, cache)
                    ? List.of("-XX:AOTCache=" + cache, "-Xlog:aot=off", "-Xlog:cds=off")
                    : List.of();
        }
        return flags;
    }

    private static boolean fresh(Path cache, Path jar) {
        try {
            return Files.size(cache) > 0
                    && Files.getLastModifiedTime(cache).compareTo(Files.getLastModifiedTime(jar)) >= 0;
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean train(String java, Path jar, Path cache) {
        Path tmp = cache.resolveSibling("kosa8.aot." + ProcessHandle.current().pid() + ".tmp");
        try {
            List<String> argv = new java.util.ArrayList<>(List.of(java));
            argv.addAll(LAUNCHER_FLAGS);
            argv.addAll(List.of("-XX:AOTCacheOutput=" + tmp, "-Xlog:aot=off", "-Xlog:cds=off", "-cp", jar.toString(),
                    "dev.kosa8.cli.AotTraining"));
            Process p = new ProcessBuilder(argv).directory(Path.of("/").toFile())
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectErrorStream(true).start();
            if (!p.waitFor(5, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                return false;
            }
            if (!Files.isRegularFile(tmp) || Files.size(tmp) == 0) { // the launcher asks no more of it either
                return false;
            }
            Files.move(tmp, cache, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return true;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // a leftover temporary file in target/ only
            }
        }
    }
}
