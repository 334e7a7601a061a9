package dev.kosa8.cli;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.AtomicFile;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which sandbox is which folder's agent: {@code agents/sessions.json} in kosa8's data directory, a session per
 * folder and agent, named {@code AGENT-HASH} (the first 12 hex digits of the SHA-256 of the folder's real path), so
 * the same folder reached through a link or a relative path finds the same sandbox. Changed under
 * {@code agents/sessions.lock}, since two {@code kosa8 agent} commands may start at once; the lock is held while a
 * session's sandbox is made, so the second finds the first's instead of making another.
 */
final class AgentSessions {
    /** One folder's agent: its sandbox and the image it was made from. */
    record Session(String name, String agent, String folder, String sandbox, String image, String created) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private final Path file;
    private final Path lock;

    AgentSessions(Path dataDirectory) {
        Path dir = dataDirectory.resolve("agents");
        this.file = dir.resolve("sessions.json");
        this.lock = dir.resolve("sessions.lock");
    }

    /** The session's name for an agent in a folder (a real path). */
    static String name(String agent, Path realFolder) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(realFolder.toString().getBytes(StandardCharsets.UTF_8));
            return agent + "-" + HexFormat.of().formatHex(d).substring(0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Every session, by name. */
    Map<String, Session> all() {
        try {
            if (!Files.exists(file)) {
                return new TreeMap<>();
            }
            return JSON.readValue(file.toFile(), new TypeReference<TreeMap<String, Session>>() { });
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot read " + file + ": " + e.getMessage(),
                    "remove it; `kosa8 ls` still lists the agents' sandboxes, and `kosa8 rm -f ID` removes them");
        }
    }

    void put(Session s) {
        Map<String, Session> m = all();
        m.put(s.name(), s);
        write(m);
    }

    void remove(String name) {
        Map<String, Session> m = all();
        if (m.remove(name) != null) {
            write(m);
        }
    }

    private void write(Map<String, Session> m) {
        try {
            AtomicFile.write(file, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(m));
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot write " + file + ": " + e.getMessage(),
                    "check the disk and the folder's permissions");
        }
    }

    /** Runs {@code body} holding the sessions' lock. */
    <T> T locked(java.util.function.Supplier<T> body) {
        try {
            Files.createDirectories(lock.getParent());
            try (FileChannel ch = FileChannel.open(lock, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                 FileLock ignored = ch.lock()) {
                return body.get();
            }
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot lock " + lock + ": " + e.getMessage(),
                    "check the disk and the folder's permissions");
        }
    }

    /** The sessions of {@code agent} (all when null), by name. */
    List<Session> list(String agent) {
        return all().values().stream().filter(s -> agent == null || s.agent().equals(agent)).toList();
    }
}
