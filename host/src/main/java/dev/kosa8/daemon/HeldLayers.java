package dev.kosa8.daemon;

import dev.kosa8.host.HostPaths;
import dev.kosa8.workspace.HeldChanges;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;

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
}
