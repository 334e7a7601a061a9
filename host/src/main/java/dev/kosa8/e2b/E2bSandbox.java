package dev.kosa8.e2b;

import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What E2B knows of one kosa8 sandbox beyond kosa8's own record: the template it was asked for, its metadata and
 * variables, its access token, when it times out and what then (kill, or pause), the user commands run as, and
 * the configuration of each process it started (E2B lists them with it).
 */
final class E2bSandbox {
    /** A process as E2B started it, by its pid in the guest. */
    record Started(String processId, String cmd, java.util.List<String> args, Map<String, String> envs, String cwd,
                   String tag, boolean pty) {
    }

    final String id;
    final String templateId;
    final String accessToken;
    final Map<String, String> metadata;
    final Map<String, String> envs;
    final Instant startedAt;
    final boolean autoPause;
    /** The user commands run as when the client names none: {@code user} where it could be made, else root. */
    final String defaultUser;
    final Map<Long, Started> processes = new ConcurrentHashMap<>();
    private volatile Instant endAt;
    private volatile Runnable onChange = () -> { };

    E2bSandbox(String id, String templateId, String accessToken, Map<String, String> metadata,
               Map<String, String> envs, Instant startedAt, Instant endAt, boolean autoPause, String defaultUser) {
        this.id = id;
        this.templateId = templateId;
        this.accessToken = accessToken;
        this.metadata = Map.copyOf(metadata);
        this.envs = Map.copyOf(envs);
        this.startedAt = startedAt;
        this.endAt = endAt;
        this.autoPause = autoPause;
        this.defaultUser = defaultUser;
    }

    Instant endAt() {
        return endAt;
    }

    void endAt(Instant t) {
        endAt = t;
        onChange.run();
    }

    /** Called after a change that must be kept ({@link #endAt(Instant)}). */
    void onChange(Runnable r) {
        onChange = r;
    }

    /** The home of {@code user}, where relative paths and commands without a cwd start. */
    static String home(String user) {
        return user.isEmpty() || user.equals("root") ? "/root" : "/home/" + user;
    }
}
