package dev.kosa8.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs one host program to completion, its output appended to a log file, and
 * turns a failure into a {@link KosaException} that names the step, the exit
 * status, the tail of the output and where the whole log is.
 */
public final class HostCommand {
    private final List<String> argv;
    private Path directory;
    private Path log;
    private Duration timeout = Duration.ofMinutes(30);
    private final java.util.Map<String, String> environment = new java.util.HashMap<>();

    private HostCommand(List<String> argv) {
        this.argv = List.copyOf(argv);
    }

    public static HostCommand of(String... argv) {
        return new HostCommand(List.of(argv));
    }

    public static HostCommand of(List<String> argv) {
        return new HostCommand(argv);
    }

    public HostCommand in(Path directory) {
        this.directory = directory;
        return this;
    }

    public HostCommand logTo(Path log) {
        this.log = log;
        return this;
    }

    public HostCommand timeout(Duration timeout) {
        this.timeout = timeout;
        return this;
    }

    public HostCommand env(String name, String value) {
        environment.put(name, value);
        return this;
    }

    /**
     * Runs the command and returns its standard output (also kept in the log).
     *
     * @param step what the user would call this step, used in the error message
     */
    public String run(KosaException.Kind kind, String step) {
        Path out = null;
        try {
            out = Files.createTempFile("kosa8-cmd", ".out");
            ProcessBuilder pb = new ProcessBuilder(argv)
                    .redirectErrorStream(true)
                    .redirectOutput(out.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            if (directory != null) {
                pb.directory(directory.toFile());
            }
            pb.environment().putAll(environment);
            Process p;
            try {
                p = pb.start();
            } catch (IOException e) {
                throw new KosaException(KosaException.Kind.HOST,
                        step + ": cannot run " + argv.getFirst() + ": " + e.getMessage(),
                        "install it (kosa8 doctor prints the exact command)", e);
            }
            boolean done = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!done) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
            String output = Files.readString(out, StandardCharsets.UTF_8);
            appendLog(output);
            if (!done) {
                throw failure(kind, step, "timed out after " + timeout.toSeconds() + " s", output);
            }
            if (p.exitValue() != 0) {
                throw failure(kind, step, "exited with status " + p.exitValue(), output);
            }
            return output;
        } catch (IOException e) {
            throw new KosaException(kind, step + ": " + e.getMessage(), "", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KosaException(kind, step + ": interrupted", "", e);
        } finally {
            if (out != null) {
                try {
                    Files.deleteIfExists(out);
                } catch (IOException ignored) {
                    // a temp file left behind is harmless
                }
            }
        }
    }

    private void appendLog(String output) throws IOException {
        if (log == null) {
            return;
        }
        Files.createDirectories(log.getParent());
        String header = "$ " + String.join(" ", argv) + System.lineSeparator();
        Files.writeString(log, header + output, StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    private KosaException failure(KosaException.Kind kind, String step, String how, String output) {
        List<String> lines = new ArrayList<>(output.lines().toList());
        List<String> tail = lines.subList(Math.max(0, lines.size() - 15), lines.size());
        String where = log == null ? "" : " (full log: " + log + ")";
        return new KosaException(kind,
                step + " failed: " + argv.getFirst() + " " + how + where
                        + (tail.isEmpty() ? "" : System.lineSeparator() + String.join(System.lineSeparator(), tail)),
                log == null ? "" : "read the log above, fix the cause, and run the command again");
    }
}
