package dev.kosa8.secrets;

import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Runs a keyring tool ({@code secret-tool}, {@code security}) with a value on
 * its standard input, never on its command line, and collects what it prints.
 * Unlike {@link dev.kosa8.host.HostCommand} it logs nothing, since the output
 * may be a secret, and it gives the exit status back, since these tools use
 * it to say "not found".
 */
final class Subprocess {
    /** How one run ended. {@code out} may hold a secret: never log it or put it in a message. */
    record Result(int exit, String out, String err) {
        @Override
        public String toString() {
            return "Result[exit=" + exit + ", err=" + err + "]";
        }
    }

    private Subprocess() {
    }

    /**
     * @param env   variables set for the child on top of this process's own (e.g. DBUS_SESSION_BUS_ADDRESS)
     * @param stdin what the child reads; empty for nothing
     * @param what  what the user would call this step, for error messages
     */
    static Result run(List<String> argv, Map<String, String> env, String stdin, Duration timeout, String what) {
        ProcessBuilder pb = new ProcessBuilder(argv);
        pb.environment().putAll(env);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, what + ": cannot run " + argv.getFirst() + ": "
                    + e.getMessage(), "install it, or set KOSA8_SECRET_STORE=file to keep secrets in a file", e);
        }
        CompletableFuture<String> out = drain(p.getInputStream());
        CompletableFuture<String> err = drain(p.getErrorStream());
        try {
            try (OutputStream in = p.getOutputStream()) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            } catch (IOException e) {
                // it exited without reading: its status and stderr say why
            }
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                p.waitFor(5, TimeUnit.SECONDS);
                throw new KosaException(KosaException.Kind.HOST, what + ": " + argv.getFirst() + " did not answer in "
                        + timeout.toSeconds() + " s", "a keyring that waits for a password prompt no one sees does "
                        + "this: unlock it in your desktop session, or set KOSA8_SECRET_STORE=file");
            }
            return new Result(p.exitValue(), out.get(5, TimeUnit.SECONDS), err.get(5, TimeUnit.SECONDS).strip());
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new KosaException(KosaException.Kind.HOST, what + ": interrupted", "", e);
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new KosaException(KosaException.Kind.HOST, what + ": cannot read what " + argv.getFirst()
                    + " printed", "", e);
        }
    }

    private static CompletableFuture<String> drain(InputStream s) {
        CompletableFuture<String> f = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try (s) {
                f.complete(new String(s.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                f.completeExceptionally(e);
            }
        });
        return f;
    }
}
