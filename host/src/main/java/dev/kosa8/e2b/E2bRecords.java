package dev.kosa8.e2b;

import com.fasterxml.jackson.core.type.TypeReference;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The listener's sandbox records on disk ({@code e2b-sandboxes.json}, 0600: it holds the access tokens), written
 * whole to a temporary file and renamed over the last on every change, so a restarted daemon's listener knows its
 * sandboxes, their tokens and their timeouts again, and its reaper ends the ones whose time passed meanwhile.
 */
final class E2bRecords {
    /** One record as stored. */
    record Stored(String id, String templateId, String accessToken, Map<String, String> metadata,
                  Map<String, String> envs, Instant startedAt, Instant endAt, boolean autoPause, String defaultUser) {
    }

    private final Path file;
    private final Consumer<String> log;

    /** @param file where the records live; null keeps them in memory only */
    E2bRecords(Path file, Consumer<String> log) {
        this.file = file;
        this.log = log;
    }

    List<E2bSandbox> load() {
        List<E2bSandbox> out = new ArrayList<>();
        if (file == null || !Files.exists(file)) {
            return out;
        }
        try {
            List<Stored> stored = Json.MAPPER.copy().findAndRegisterModules()
                    .readValue(file.toFile(), new TypeReference<List<Stored>>() { });
            for (Stored s : stored) {
                if (s.id() == null || s.accessToken() == null || s.startedAt() == null || s.endAt() == null) {
                    continue;
                }
                out.add(new E2bSandbox(s.id(), s.templateId() == null ? "" : s.templateId(), s.accessToken(),
                        s.metadata() == null ? Map.of() : s.metadata(), s.envs() == null ? Map.of() : s.envs(),
                        s.startedAt(), s.endAt(), s.autoPause(), s.defaultUser() == null ? "root" : s.defaultUser()));
            }
        } catch (IOException | RuntimeException e) {
            log.accept("e2b: cannot read " + file + " (" + e.getMessage() + "): the listener starts knowing no"
                    + " sandboxes; those it made are still in `kosa8 ls`");
        }
        return out;
    }

    synchronized void save(Collection<E2bSandbox> all) {
        if (file == null) {
            return;
        }
        List<Stored> stored = all.stream().map(s -> new Stored(s.id, s.templateId, s.accessToken, s.metadata,
                s.envs, s.startedAt, s.endAt(), s.autoPause, s.defaultUser)).toList();
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            Files.deleteIfExists(tmp);
            Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.write(tmp, Json.MAPPER.copy().findAndRegisterModules()
                    .disable(com.fasterxml.jackson.databind.SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
                    .writeValueAsBytes(stored));
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            log.accept("e2b: cannot save " + file + ": " + e.getMessage());
        }
    }
}
