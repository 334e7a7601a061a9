package dev.kosa8.e2b;

import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The sandboxes made through E2B, each with its access token and timeout, and the reaper that ends a sandbox
 * whose timeout passed: removed, or paused (stopped to disk) when it was made with {@code autoPause}. Kept on disk
 * ({@link E2bRecords}) when given a file, so a restarted daemon's listener knows them, and reaps them, again.
 */
final class E2bSandboxes implements AutoCloseable {
    /** E2B's default timeout: five minutes. */
    static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(5);
    /** The longest timeout E2B takes (its Pro plan's 24 hours). */
    static final Duration MAX_TIMEOUT = Duration.ofHours(24);
    /** How many E2B sandboxes at once; kosa8's own bounds (memory, disk budget) apply beneath. */
    static final int MAX_SANDBOXES = 64;

    private static final SecureRandom RANDOM = new SecureRandom();

    private final E2bBackend backend;
    private final Consumer<String> log;
    private final Map<String, E2bSandbox> all = new ConcurrentHashMap<>();
    private final E2bRecords records;
    private final ScheduledExecutorService reaper = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("e2b-reaper").daemon().factory());

    E2bSandboxes(E2bBackend backend, Consumer<String> log) {
        this(backend, log, null);
    }

    /** @param store where the records are kept across daemon restarts ({@link E2bRecords}); null: memory only */
    E2bSandboxes(E2bBackend backend, Consumer<String> log, java.nio.file.Path store) {
        this.backend = backend;
        this.log = log;
        this.records = new E2bRecords(store, log);
        for (E2bSandbox s : records.load()) {
            s.onChange(this::save);
            all.put(s.id, s);
        }
        reaper.scheduleWithFixedDelay(this::reap, 1, 1, TimeUnit.SECONDS);
    }

    private void save() {
        records.save(all.values());
    }

    E2bBackend backend() {
        return backend;
    }

    static String token() {
        byte[] b = new byte[20];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /** Makes a sandbox from {@code template}, makes its E2B user, and starts its timeout. */
    E2bSandbox create(String template, Map<String, String> metadata, Map<String, String> envs, Duration timeout,
                      boolean autoPause, int cpus, int memoryMiB) {
        if (all.size() >= MAX_SANDBOXES) {
            throw new ApiError(429, "this listener keeps at most " + MAX_SANDBOXES + " E2B sandboxes at once: kill"
                    + " one first");
        }
        String id = backend.create(template, cpus, memoryMiB);
        String user;
        try {
            user = makeUser(id);
        } catch (RuntimeException e) {
            backend.remove(id);
            throw e;
        }
        Instant now = Instant.now();
        E2bSandbox s = new E2bSandbox(id, template, token(), metadata, envs, now, now.plus(timeout), autoPause, user);
        s.onChange(this::save);
        all.put(id, s);
        save();
        return s;
    }

    /**
     * E2B runs commands as {@code user}, home {@code /home/user}; kosa8's images have root alone. The user is made
     * at create where the image has {@code useradd}; elsewhere (busybox roots) commands run as root.
     */
    private String makeUser(String id) {
        GuestCalls.Result r = GuestCalls.run(backend.guest(id), List.of("/bin/sh", "-c",
                "id -u user >/dev/null 2>&1 && exit 0; command -v useradd >/dev/null 2>&1 || exit 3;"
                        + " useradd -m -s \"$(command -v bash || echo /bin/sh)\" user"), "", Duration.ofSeconds(60));
        if (r.exitCode() == 0) {
            return "user";
        }
        if (r.exitCode() == 3) {
            log.accept("e2b: sandbox " + id + "'s image has no useradd: its E2B commands run as root");
            return "root";
        }
        throw new ApiError(500, "could not make the user `user` in sandbox " + id + ": " + r.stderr().strip());
    }

    /** The E2B sandbox {@code id}, when it is E2B's and its kosa8 sandbox is still there. */
    Optional<E2bSandbox> find(String id) {
        E2bSandbox s = all.get(id);
        if (s == null) {
            return Optional.empty();
        }
        if (backend.find(id).isEmpty()) {
            all.remove(id);
            save();
            return Optional.empty();
        }
        return Optional.of(s);
    }

    E2bSandbox get(String id) {
        return find(id).orElseThrow(() -> ApiError.notFound("sandbox " + id + " not found"));
    }

    List<E2bSandbox> list() {
        return all.keySet().stream().map(this::find).flatMap(Optional::stream).toList();
    }

    /** Removes it; false when there was none. */
    boolean kill(String id) {
        E2bSandbox s = all.remove(id);
        if (s == null) {
            return false;
        }
        save();
        if (backend.find(id).isEmpty()) {
            return false;
        }
        backend.remove(id);
        backend.processes().forget(id);
        return true;
    }

    private void reap() {
        Instant now = Instant.now();
        for (E2bSandbox s : List.copyOf(all.values())) {
            if (s.endAt().isAfter(now)) {
                continue;
            }
            try {
                var m = backend.find(s.id);
                if (m.isEmpty()) {
                    all.remove(s.id);
                    save();
                } else if (s.autoPause) {
                    if (m.get().state() == E2bBackend.State.RUNNING) {
                        log.accept("e2b: sandbox " + s.id + " timed out: pausing it (autoPause)");
                        backend.pause(s.id);
                    }
                } else {
                    log.accept("e2b: sandbox " + s.id + " timed out: removing it");
                    kill(s.id);
                }
            } catch (RuntimeException e) {
                log.accept("e2b: ending timed-out sandbox " + s.id + " failed: " + e.getMessage());
                s.endAt(now.plusSeconds(30)); // tried again later, not every second
            }
        }
    }

    @Override
    public void close() {
        reaper.shutdownNow();
    }
}
