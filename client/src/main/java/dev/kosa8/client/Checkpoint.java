package dev.kosa8.client;

import java.time.Instant;

/**
 * A whole-machine checkpoint of a sandbox: its memory, disk and workspace folder at one instant.
 *
 * @param state       {@code pending} (its memory still being saved), {@code committed} or {@code failed}
 * @param pauseMillis how long the guest stood still for it
 */
public record Checkpoint(String id, String message, Instant created, String state, long pauseMillis) {

    static Checkpoint of(Object v) {
        return new Checkpoint(Json.text(v, "id"), Json.text(v, "message"), Values.instant(v, "created"),
                Json.text(v, "state"), Json.number(v, "pauseMillis"));
    }
}
