package dev.kosa8.agent;

/** The agent's log: lines on stderr, which the guest init points at the serial console. */
final class Log {
    private Log() {
    }

    static void info(String message) {
        System.err.println("kosa8-agent: " + message);
    }
}
