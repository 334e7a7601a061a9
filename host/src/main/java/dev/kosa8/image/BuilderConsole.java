package dev.kosa8.image;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * The builder VM's console as the host reads it: what the guest writes is taken on trust in nothing. Each line is
 * cut at {@value #MAX_LINE} bytes and cleaned of terminal escapes and control characters (mmdebstrap colours
 * a console; nothing the guest prints may reach the user's terminal as a control sequence); the build log gets the
 * lines with their time, up to {@value #MAX_LOG} bytes; {@code kosa8-builder:} and mmdebstrap's {@code I:} lines
 * are the progress; the last lines are kept for an error. The build succeeded only if the console said
 * {@link BuilderVm#OK} and never {@link BuilderVm#FAILED}.
 */
final class BuilderConsole implements Runnable {
    static final int MAX_LINE = 8192;
    static final long MAX_LOG = 16L << 20;
    private static final int TAIL = 25;
    private static final Pattern ESCAPES = Pattern.compile("\u001B(\\[[0-?]*[ -/]*[@-~]|\\][^\u0007\u001B]*(\u0007|\u001B\\\\)?|.)");

    private final InputStream in;
    private final Path log;
    private final Consumer<String> progress;
    private final long started = System.nanoTime();
    private final Deque<String> tail = new ArrayDeque<>();
    private long logged;
    private volatile boolean sawOk;
    private volatile boolean sawFailed;

    BuilderConsole(InputStream in, Path log, Consumer<String> progress) {
        this.in = in;
        this.log = log;
        this.progress = progress;
    }

    @Override
    public void run() {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        byte[] buf = new byte[8192];
        try (in) {
            int n;
            while ((n = in.read(buf)) > 0) {
                for (int i = 0; i < n; i++) {
                    if (buf[i] == '\n') {
                        line(line);
                    } else if (line.size() < MAX_LINE) {
                        line.write(buf[i]);
                    }
                }
            }
        } catch (IOException ignored) {
            // QEMU is gone
        }
        if (line.size() > 0) {
            line(line);
        }
    }

    private void line(ByteArrayOutputStream bytes) {
        String text = clean(bytes.toString(StandardCharsets.UTF_8));
        bytes.reset();
        log(String.format(Locale.ROOT, "[%7.1f s] %s", (System.nanoTime() - started) / 1e9, text));
        synchronized (tail) {
            tail.addLast(text);
            if (tail.size() > TAIL) {
                tail.removeFirst();
            }
        }
        if (text.equals(BuilderVm.OK)) {
            sawOk = true;
        } else if (text.startsWith(BuilderVm.FAILED)) {
            sawFailed = true;
        } else if (text.startsWith("kosa8-builder: ") || text.startsWith("I: ")) {
            progress.accept("builder VM: " + text.substring(text.indexOf(' ') + 1));
        }
    }

    /** The line without terminal escapes and without control characters but tab. */
    static String clean(String raw) {
        String s = ESCAPES.matcher(raw).replaceAll("");
        StringBuilder out = new StringBuilder(s.length());
        s.codePoints().filter(c -> c == '\t' || (c >= 0x20 && c != 0x7f && !(c >= 0x80 && c < 0xa0)))
                .forEach(out::appendCodePoint);
        return out.toString();
    }

    private void log(String text) {
        if (logged > MAX_LOG) {
            return;
        }
        byte[] b = (text + "\n").getBytes(StandardCharsets.UTF_8);
        if (logged + b.length > MAX_LOG) {
            b = ("[the rest of the builder's console is not kept: over " + (MAX_LOG >> 20) + " MiB]\n")
                    .getBytes(StandardCharsets.UTF_8);
            logged = MAX_LOG + 1; // nothing after the notice
        } else {
            logged += b.length;
        }
        try (OutputStream out = Files.newOutputStream(log, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
            out.write(b);
        } catch (IOException ignored) {
            // the log is a help, not the build
        }
    }

    /** Whether the build finished: it said OK and never FAILED. */
    boolean succeeded() {
        return sawOk && !sawFailed;
    }

    /** The console's last lines, for an error. */
    String tail() {
        synchronized (tail) {
            return String.join("\n  ", tail);
        }
    }
}
