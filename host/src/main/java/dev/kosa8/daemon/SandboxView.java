package dev.kosa8.daemon;

import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A sandbox as the API shows it (`kosa8 inspect`). Its state is its record's, or {@code attaching} while a
 * daemon that has just started is still re-attaching to its machine (which ends running, or failed saying why).
 *
 * @param secrets the names of the secrets it holds placeholders of, and the variables they are in
 * @param workspace the host folder it shares, empty for none; for a fork whose folder is a copy-on-write view,
 *                  the directory of the view's parts ({@code upper/} holds what it changed)
 * @param workspaceView whether its folder is such a view (docs/checkpoints.md, "What the copies share")
 * @param ports     its published ports, as {@code 127.0.0.1:8080->80} (host address and port, guest port)
 * @param createdBy who made it when not the user at a terminal ({@code mcp:CLIENT}); empty otherwise
 * @param arch      the guest's architecture, Debian's name ({@code amd64}, {@code arm64})
 */
public record SandboxView(String id, String state, boolean ephemeral, int cpus, int memoryMiB, String accelerator,
                          String imageId, Instant created, long qemuPid, String failure, String directory,
                          String agent, List<Map<String, String>> secrets,
                          String workspace, boolean workspaceView, List<String> ports, String createdBy,
                          String arch) {

    static SandboxView of(Sandbox s, String directory) {
        SandboxRecord r = s.record();
        var vm = s.vm();
        String agent = vm != null && vm.agent().agentHello() != null ? vm.agent().agentHello().software() : "";
        String state = s.attaching() ? "attaching" : r.state().name().toLowerCase(Locale.ROOT);
        return new SandboxView(r.id(), state, r.ephemeral(), r.cpus(),
                r.memoryMiB(), r.accelerator(), r.imageId(), r.created(), r.qemuPid(), r.failure(), directory, agent,
                r.secrets().stream().map(g -> Map.of("name", g.name(), "env", g.env())).toList(),
                r.workspace(), s.folderAccess().isView(r), r.ports().stream().map(Object::toString).toList(), r.createdBy(),
                r.image().arch().debianName());
    }
}
