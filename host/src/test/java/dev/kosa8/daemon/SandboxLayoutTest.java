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
    void cleaningARuntimeDirectoryRemovesEverySocketAMachineLeavesTheNetworkLinksToo() throws Exception {
        SandboxLayout layout = new SandboxLayout(new HostPaths(home.resolve("data"), home.resolve("cache"),
                home.resolve("run")));
        Path run = Files.createDirectories(layout.runtime("abcdef012345"));
        for (String name : List.of("qmp.sock", "agent.sock", "ws9p.sock", "net.sock")) {
            Files.createFile(run.resolve(name));
        }
        List<String> log = new ArrayList<>();
        layout.cleanRuntime("abcdef012345", log::add);
        assertThat(log).isEmpty();
        assertThat(run).doesNotExist();
    }
}
