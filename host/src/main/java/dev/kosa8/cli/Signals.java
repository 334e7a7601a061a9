package dev.kosa8.cli;

import java.util.function.IntConsumer;

/**
 * Catches the signals a user sends to the CLI (Ctrl-C, kill, hang-up, a
 * terminal resize) and hands them to the exec, which forwards them into the
 * sandbox. Uses {@code sun.misc.Signal}, the JDK's only way to catch signals.
 */
final class Signals {
    private Signals() {
    }

    @SuppressWarnings("removal")
    static void forward(IntConsumer onSignal, Runnable onResize) {
        for (String name : new String[] {"INT", "TERM", "HUP", "QUIT"}) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(name), s -> onSignal.accept(s.getNumber()));
            } catch (IllegalArgumentException e) {
                // the JVM keeps this one (QUIT under some options): leave it
            }
        }
        if (onResize != null) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal("WINCH"), s -> onResize.run());
            } catch (IllegalArgumentException e) {
                // no resize events: the size stays what it was
            }
        }
    }
}
