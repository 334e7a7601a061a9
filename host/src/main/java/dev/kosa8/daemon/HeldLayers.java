package dev.kosa8.daemon;

import dev.kosa8.host.HostPaths;
import dev.kosa8.workspace.HeldChanges;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Where a sandbox's held layer lives ({@code held/} in its directory) and which classes it holds:
 * the defaults, the user's {@code held-paths.txt} in kosa8's configuration directory, and the
 * sandbox's own {@code --hold}/{@code --no-hold}.
 */
final class HeldLayers {
    private HeldLayers() {
    }

    static Path dir(SandboxLayout layout, String id) {
        return layout.directory(id).resolve("held");
    }

    static Path userFile() {
        return HostPaths.config().resolve("held-paths.txt");
    }

    static HeldChanges open(SandboxLayout layout, String id, Consumer<String> log) {
        return HeldChanges.open(dir(layout, id), userFile(), log);
    }

    static void choose(SandboxLayout layout, String id, List<String> hold, List<String> noHold, String folder) {
        HeldChanges.choose(dir(layout, id), userFile(), hold, noHold, folder);
    }

    /** Where a removed sandbox's held changes are kept until reviewed: {@code held/ID} beside the sandboxes. */
    static Path kept(SandboxLayout layout, String id) {
        return keptRoot(layout).resolve(id);
    }

    static Path keptRoot(SandboxLayout layout) {
        return layout.sandboxes().resolveSibling("held");
    }

    /**
     * The bytes each removed sandbox's kept held changes take ({@code kosa8 df}): no sandbox's budget
     * counts them once the sandbox is gone; accept or reject gives them back.
     */
    static Map<String, Long> keptBytes(SandboxLayout layout) throws IOException {
        Map<String, Long> bytes = new TreeMap<>();
        Path root = keptRoot(layout);
        if (!Files.isDirectory(root)) {
            return bytes;
        }
        try (Stream<Path> kept = Files.list(root)) {
            for (Path dir : kept.filter(Files::isDirectory).toList()) {
                bytes.put(dir.getFileName().toString(), DiskUsage.tree(dir));
            }
        }
        return bytes;
    }
}
