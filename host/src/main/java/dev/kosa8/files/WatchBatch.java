package dev.kosa8.files;

import dev.kosa8.protocol.WatchEvent;
import java.util.List;

/**
 * What one {@link FileWatch#poll} took.
 *
 * @param events the events in the order seen; an {@code OVERFLOW} event stands where events were lost
 * @param ended  whether the watch is over (removed, its directory gone, the sandbox stopped or rewound) and
 *               nothing more will come
 * @param reason why it ended; empty while it runs
 */
public record WatchBatch(List<WatchEvent> events, boolean ended, String reason) {
    public WatchBatch {
        events = List.copyOf(events);
        reason = reason == null ? "" : reason;
    }
}
