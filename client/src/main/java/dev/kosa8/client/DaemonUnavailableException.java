package dev.kosa8.client;

/** The daemon could not be reached, or the connection to it broke. */
public final class DaemonUnavailableException extends Kosa8Exception {
    DaemonUnavailableException(String message, String suggestion, Throwable cause) {
        super(Kind.DAEMON, message, suggestion, Kind.DAEMON.exitCode(), cause);
    }
}
