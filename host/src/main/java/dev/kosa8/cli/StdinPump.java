package dev.kosa8.cli;

import java.io.IOException;
import java.io.InputStream;

/** Sends this command's stdin to a kept process as it comes, and closes the process's stdin at its end. */
final class StdinPump {
    private StdinPump() {
    }

    static Thread start(ProcessCalls calls, String proc, InputStream in) {
        return Thread.ofPlatform().daemon().name("stdin").start(() -> {
            try {
                calls.writeAll(proc, in);
                calls.closeStdin(proc);
            } catch (IOException | RuntimeException e) {
                // the process ended, or the daemon refused: what it printed and its exit say the rest
            }
        });
    }
}
