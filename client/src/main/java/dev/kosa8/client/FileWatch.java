package dev.kosa8.client;

import java.time.Duration;
import java.util.List;

/**
 * A watch on a directory in the sandbox (inotify in the guest): the changes made after it began, taken in order.
 * The daemon keeps at most 4,096 events no one has taken; past that it drops them and the next {@link #poll}
 * ends with an {@code OVERFLOW} event. Close it when done (16 per sandbox at most).
 */
public final class FileWatch implements AutoCloseable {
    private final DaemonConnection daemon;
    private final String base;
    private final String id;

    /** One change: {@code CREATE}, {@code WRITE}, {@code REMOVE}, {@code RENAME}, {@code CHMOD} or {@code OVERFLOW}. */
    public record Event(String type, String path) {
    }

    /** What one poll took; {@code ended} (with its reason) once the watch is over, its directory gone. */
    public record Events(List<Event> events, boolean ended, String reason) {
    }

    FileWatch(DaemonConnection daemon, String sandbox, String id) {
        this.daemon = daemon;
        this.base = "/v1/sandboxes/" + sandbox + "/files/watches/" + id;
        this.id = id;
    }

    public String id() {
        return id;
    }

    /** Takes the events so far, waiting up to {@code wait} (at most 60 s) for the first. */
    public Events poll(Duration wait) {
        Object w = daemon.call("GET", base + "?wait=" + Math.min(60, wait.toSeconds()));
        List<Event> events = Json.list(Json.get(w, "events")).stream()
                .map(e -> new Event(Json.text(e, "type"), Json.text(e, "path"))).toList();
        return new Events(events, Json.flag(w, "ended"), Json.text(w, "reason"));
    }

    /** Ends the watch; again does nothing. */
    @Override
    public void close() {
        try {
            daemon.call("DELETE", base);
        } catch (SandboxFileException | InvalidRequestException e) {
            // ended already (its directory went, the sandbox stopped)
        }
    }
}
