package dev.kosa8.cli;

import dev.kosa8.client.ExecChannel;
import dev.kosa8.client.Json;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.Base64;

/**
 * Writes a kept process's output here from an offset: stdout to stdout, stderr to stderr, each byte once. It
 * follows the output until the process ends (the exit code is then the process's), or only prints what there is.
 * Stopped by Ctrl-C, it says the offset it got to, for {@code kosa8 attach --from} to go on from there; the process
 * runs on.
 */
final class OutputFollower {
    /** What one read asks for. */
    static final int READ_BYTES = 1 << 20;
    /** How long one read waits for output while following; a new read follows at once. */
    static final int WAIT_SECONDS = 25;

    private final ProcessCalls calls;
    private final String proc;
    private final OutputStream out;
    private final OutputStream err;
    private final PrintStream notes;
    private volatile long next;
    private volatile boolean over;

    OutputFollower(ProcessCalls calls, String proc, OutputStream out, OutputStream err, PrintStream notes) {
        this.calls = calls;
        this.proc = ProcessCalls.checkProcess(proc);
        this.out = out;
        this.err = err;
        this.notes = notes;
    }

    /**
     * Writes the output from {@code from}; with {@code follow}, until the process ends, else until what there is
     * now has been written.
     *
     * @return the process's exit code once it has ended (128 + N for signal N), 0 when it runs on
     */
    int run(long from, boolean follow) {
        next = from;
        Thread hook = CliExit.atExit(this::sayWhereItStopped, "kosa8-follow");
        try {
            while (true) {
                Object r = calls.output(proc, next, READ_BYTES, follow ? WAIT_SECONDS : 0);
                long dropped = Json.number(r, "dropped");
                if (dropped > 0) {
                    notes.println("kosa8: " + dropped + " bytes of " + proc + "'s output were dropped before they "
                            + "were read (it keeps the last " + Json.number(Json.get(Json.get(r, "process"), "output"),
                            "capacity") + " bytes while no one reads)");
                }
                if (!write(r)) {
                    return ExecChannel.EXIT_BROKEN_PIPE;
                }
                next = Json.number(r, "next");
                if (Json.flag(r, "complete")) {
                    over = true;
                    return ended(Json.get(r, "process"));
                }
                if (!follow && next == Json.number(r, "end")) {
                    over = true;
                    return 0;
                }
            }
        } finally {
            over = true;
            CliExit.cancel(hook);
        }
    }

    /** Writes each chunk to its stream; false when this side's reader went away. */
    private boolean write(Object r) {
        for (Object c : Json.list(Json.get(r, "chunks"))) {
            byte[] bytes = Base64.getDecoder().decode(Json.text(c, "data"));
            OutputStream target = "stderr".equals(Json.text(c, "stream")) ? err : out;
            try {
                target.write(bytes);
                target.flush();
            } catch (IOException e) {
                return false;
            }
            next = Json.number(c, "offset") + bytes.length;
        }
        return true;
    }

    /** A process that could not start (its record says failed) is an error that says why, with its exit code. */
    static void checkStarted(Object process) {
        if ("failed".equals(Json.text(process, "state"))) {
            failed(process, Json.text(process, "id"));
        }
    }

    private static void failed(Object process, String proc) {
        String reason = Json.text(process, "reason");
        Object code = Json.get(process, "exitCode");
        if (code instanceof Number n) {
            throw KosaException.withExitCode(KosaException.Kind.USAGE, reason, n.intValue() == 127
                    ? "check the program's name; the sandbox's PATH is /usr/local/bin:/usr/bin:/bin (and sbin)" : "",
                    n.intValue());
        }
        throw new KosaException(KosaException.Kind.VM, "process " + proc + " ended without an exit code: " + reason,
                "");
    }

    /** The exit code of a process that ended; a process lost with its machine is an error that says why. */
    private int ended(Object process) {
        checkStarted(process);
        String reason = Json.text(process, "reason");
        Object code = Json.get(process, "exitCode");
        if (!reason.isEmpty()) {
            notes.println("kosa8: " + proc + " " + reason);
        }
        return code instanceof Number n ? n.intValue() : 0;
    }

    private void sayWhereItStopped() {
        if (!over) {
            notes.println();
            notes.println("kosa8: detached from " + proc + " at offset " + next + "; it runs on (`kosa8 attach "
                    + calls.sandbox() + " " + proc + " --from " + next + "` goes on from there)");
            notes.flush();
        }
    }
}
