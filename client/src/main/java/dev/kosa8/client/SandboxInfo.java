package dev.kosa8.client;

import java.time.Instant;
import java.util.List;

/**
 * A sandbox as the daemon shows it ({@code kosa8 inspect}).
 *
 * @param state     {@code running}, {@code stopped}, {@code failed}, {@code attaching}...
 * @param workspace the host folder it shares, "" for none
 * @param ports     its published ports, as {@code 127.0.0.1:8080->80}
 */
public record SandboxInfo(String id, String state, boolean ephemeral, int cpus, int memoryMiB, String imageId,
                          Instant created, String workspace, List<String> ports, String failure) {

    static SandboxInfo of(Object v) {
        return new SandboxInfo(Json.text(v, "id"), Json.text(v, "state"), Json.flag(v, "ephemeral"),
                (int) Json.number(v, "cpus"), (int) Json.number(v, "memoryMiB"), Json.text(v, "imageId"),
                Values.instant(v, "created"), Json.text(v, "workspace"), Values.strings(v, "ports"),
                Json.text(v, "failure"));
    }

    public boolean running() {
        return state.equals("running");
    }
}
