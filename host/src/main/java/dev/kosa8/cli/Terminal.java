package dev.kosa8.cli;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The user's terminal, driven through {@code stty} on {@code /dev/tty}: its
 * size, and raw mode for a TTY exec (restored on exit, even on Ctrl-C).
 */
final class Terminal {
    private Terminal() {
    }

    static boolean isInteractive() {
        return System.console() != null && System.console().isTerminal();
    }

    /** Rows and columns, or 24x80 when unknown. */
    static int[] size() {
        try {
            String s = stty("size").trim();
            String[] p = s.split("\\s+");
            if (p.length == 2) {
                int rows = Integer.parseInt(p[0]);
                int cols = Integer.parseInt(p[1]);
                if (rows > 0 && cols > 0) {
                    return new int[] {rows, cols};
                }
            }
        } catch (IOException | RuntimeException e) {
            // not a terminal: the default size will do
        }
        return new int[] {24, 80};
    }

    /** Puts the terminal in raw mode; the returned action restores it. */
    static Runnable raw() {
        try {
            String saved = stty("-g").trim();
            stty("raw", "-echo");
            Runnable restore = () -> {
                try {
                    stty(saved);
                } catch (IOException ignored) {
                    // the terminal is gone
                }
            };
            Thread hook = CliExit.atExit(restore, "kosa8-terminal");
            return () -> {
                CliExit.cancel(hook);
                restore.run();
            };
        } catch (IOException e) {
            return () -> { };
        }
    }

    private static String stty(String... args) throws IOException {
        List<String> argv = new java.util.ArrayList<>(List.of("stty"));
        argv.addAll(List.of(args));
        Process p = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/tty")))
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.waitFor() != 0) {
                throw new IOException("stty failed");
            }
            return out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        }
    }
}
