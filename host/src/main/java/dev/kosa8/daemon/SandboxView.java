package dev.kosa8.daemon;

import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A sandbox as the API shows it (`kosa8 inspect`).
 *
 * @param secrets the names of the secrets it holds placeholders of, and the variables they are in
 * @param workspace the host folder it shares, empty for none
 */
public record SandboxView(String id, String state, boolean ephemeral, int cpus, int memoryMiB, String accelerator,
                          String imageId, Instant created, long qemuPid, String failure, String directory,
                          String agent, List<Map<String, String>> secrets,
                          String workspace) {

    static SandboxView of(Sandbox s, String directory) {
        SandboxRecord r = s.record();
        var vm = s.vm();
        String agent = vm != null && vm.agent().agentHello() != null ? vm.agent().agentHello().software() : "";
        return new SandboxView(r.id(), r.state().name().toLowerCase(Locale.ROOT), r.ephemeral(), r.cpus(),
                r.memoryMiB(), r.accelerator(), r.imageId(), r.created(), r.qemuPid(), r.failure(), directory, agent,
                r.secrets().stream().map(g -> Map.of("name", g.name(), "env", g.env())).toList(),
                r.workspace());
    }
}
