package dev.kosa8.client;

import java.time.Instant;
import java.util.List;

/**
 * A background process the daemon keeps (docs/processes.md).
 *
 * @param id       its id in the sandbox ({@code p1}, {@code p2}...)
 * @param state    {@code running}, {@code exited} or {@code failed}
 * @param exitCode null while it runs; 128 + N when signal N ended it
 * @param reason   why it ended when not by itself ("timed out after 5 s", "ended by SIGTERM..."), else ""
 * @param pid      its pid in the guest (0 until known)
 */
public record ProcessInfo(String id, List<String> command, String tag, String state, Integer exitCode,
                          String reason, long pid, boolean stdinOpen, Instant started, Instant ended) {

    static ProcessInfo of(Object v) {
        return new ProcessInfo(Json.text(v, "id"), Values.strings(v, "command"), Json.text(v, "tag"),
                Json.text(v, "state"), Values.integerOrNull(v, "exitCode"), Json.text(v, "reason"),
                Json.number(v, "pid"), Json.flag(v, "stdinOpen"), Values.instant(v, "started"),
                Values.instant(v, "ended"));
    }

    public boolean running() {
        return state.equals("running");
    }
}
