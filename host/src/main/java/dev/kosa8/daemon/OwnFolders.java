package dev.kosa8.daemon;

import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.egress.RealPaths;
import java.nio.file.Path;
import java.util.List;

/**
 * Refuses a new sandbox's folder that holds one of kosa8's own: its data
 * (every sandbox's record, CA key and checkpoints), its cache or its runtime
 * folder (the daemon's socket). A guest writes its folder, so it could change
 * another sandbox's allow-list or read its keys. Compared as real paths, so a
 * link does not hide one; a folder not made yet counts as where it would be.
 */
final class OwnFolders {
    private OwnFolders() {
    }

    /**
     * Refuses {@code workspace} as a new sandbox's folder, whatever its network, when it holds kosa8's network
     * or test settings (a guest writing them would open others' networks) or one of kosa8's own folders.
     */
    static void refuseAsNew(String workspace, HostPaths paths, SandboxNetworks networks) {
        networks.refuseSettingsIn(workspace);
        refuseInside(workspace, paths);
    }

    private static void refuseInside(String workspace, HostPaths paths) {
        if (workspace == null || workspace.isEmpty()) {
            return;
        }
        List<Path> kosa8s = List.of(paths.data(), paths.cache(), paths.runtime());
        RealPaths.firstInside(kosa8s, Path.of(workspace)).ifPresent(own -> {
            throw new KosaException(KosaException.Kind.USAGE, "kosa8 keeps its own files in " + own
                    + ", which is inside the folder the new sandbox would share (" + workspace + "): its guest"
                    + " could read and change other sandboxes' records, keys and checkpoints",
                    "give it another folder (`--workspace DIR`, or `--workspace none`), or keep kosa8's folders "
                            + "(KOSA8_HOME) outside it");
        });
    }
}
