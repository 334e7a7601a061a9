package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.host.HostPaths;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SandboxLayoutTest {
    @TempDir
    Path home;

    @Test
    void cleaningARuntimeDirectoryRemovesEveryFileAMachineLeavesTheNetworkLinksToo() throws Exception {
        SandboxLayout layout = new SandboxLayout(new HostPaths(home.resolve("data"), home.resolve("cache"),
                home.resolve("run")));
        Path run = Files.createDirectories(layout.runtime("abcdef012345"));
        // every file a QEMU's machine folder holds, as the machine's spec names them: in the folder and in alt/
        for (Path dir : List.of(run, Files.createDirectories(run.resolve(SandboxLayout.ALT)))) {
            dev.kosa8.vm.VmSpec spec = new dev.kosa8.vm.VmSpec("abcdef012345", dev.kosa8.vm.Accelerator.TCG, 1, 256,
                    Path.of("/k"), Path.of("/i"), Path.of("/r"), "", Path.of("/c"), dir.resolve("qmp.sock"),
                    dir.resolve("agent.sock"), dir.resolve("ws9p.sock"), dir.resolve("net.sock"));
            for (Path file : List.of(spec.qmpSocket(), spec.agentSocket(), spec.workspaceSocket(), spec.netSocket(),
                    spec.consoleSocket(), spec.workspaceWindow(), spec.workspaceWrites(), spec.netWindow())) {
                Files.createFile(file);
            }
        }
        List<String> log = new ArrayList<>();
        layout.cleanRuntime("abcdef012345", log::add);
        assertThat(log).isEmpty();
        assertThat(run).doesNotExist();
    }
}
