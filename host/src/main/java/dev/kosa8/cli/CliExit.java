package dev.kosa8.cli;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How the CLI ends. {@link System#exit} looks up a {@code System.Logger} to
 * log the exit, and that lookup reads the service files of every jar on the
 * class path: the 47 MB jar's central directory, about 20 ms of every
 * command (docs/performance.md, "Where a CLI start's time goes"). The
 * commands of {@link HotPath} end by {@link #halt} instead, which runs what
 * was registered here to run at exit, flushes the standard streams and
 * halts. Every action the CLI needs at exit is registered here (it is a
 * shutdown hook as well, for an exit by a signal or by {@code System.exit});
 * the other commands, which may start code that registers hooks of its own
 * (the MCP server), end by {@code System.exit} as before.
 */
final class CliExit {
    private static final Set<Thread> HOOKS = ConcurrentHashMap.newKeySet();

    private CliExit() {
    }

    /** Runs {@code action} at exit, however the CLI ends, unless {@link #cancel}led; the handle to cancel it. */
    static Thread atExit(Runnable action, String name) {
        Thread t = new Thread(action, name);
        HOOKS.add(t);
        Runtime.getRuntime().addShutdownHook(t);
        return t;
    }

    /** {@code hook} need not run at exit after all. */
    static void cancel(Thread hook) {
        if (HOOKS.remove(hook)) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // shutting down: it runs
            }
        }
    }

    /**
     * Ends the process with {@code code}: the actions registered to run at
     * exit, each once, then the standard streams flushed, then a halt.
     */
    static void halt(int code) {
        for (Thread hook : HOOKS) {
            cancel(hook);
            hook.run();
        }
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(code);
    }
}
