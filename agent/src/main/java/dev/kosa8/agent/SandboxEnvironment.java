package dev.kosa8.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Variables every command in the sandbox gets, such as the egress proxy's
 * address: {@code KEY=VALUE} lines in {@value #FILE}, written by the guest's
 * init at each boot. Read at each exec, so a command's own environment (sent
 * with the exec) still overrides them. Convenience only: a process that drops
 * them reaches nothing more, since the network's limits live on the host.
 */
final class SandboxEnvironment {
    static final String FILE = "/etc/kosa8/exec.env";
    private static final int MAX_BYTES = 64 * 1024;

    private SandboxEnvironment() {
    }

    static Map<String, String> load() {
        return load(Path.of(FILE));
    }

    static Map<String, String> load(Path file) {
        Map<String, String> env = new LinkedHashMap<>();
        try {
            if (!Files.isRegularFile(file) || Files.size(file) > MAX_BYTES) {
                return env;
            }
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                int eq = line.indexOf('=');
                if (eq > 0 && !line.startsWith("#")) {
                    env.put(line.substring(0, eq).strip(), line.substring(eq + 1));
                }
            }
        } catch (IOException e) {
            Log.info("cannot read " + file + ": " + e.getMessage());
        }
        return env;
    }
}
