package dev.kosa8.client;

import java.nio.charset.StandardCharsets;

/**
 * How a command ended and what it wrote.
 *
 * @param exitCode its exit code; 128 + N when signal N ended it (137: killed, as by a timeout)
 * @param timedOut true when its {@link Command#timeout} ended it
 */
public record ExecResult(int exitCode, byte[] stdoutBytes, byte[] stderrBytes, boolean timedOut) {

    /** Its standard output as UTF-8 text. */
    public String stdout() {
        return new String(stdoutBytes, StandardCharsets.UTF_8);
    }

    /** Its standard error as UTF-8 text. */
    public String stderr() {
        return new String(stderrBytes, StandardCharsets.UTF_8);
    }

    public boolean succeeded() {
        return exitCode == 0;
    }

    @Override
    public String toString() {
        return "ExecResult[exitCode=" + exitCode + ", stdout=" + stdoutBytes.length + " bytes, stderr="
                + stderrBytes.length + " bytes" + (timedOut ? ", timed out" : "") + "]";
    }
}
