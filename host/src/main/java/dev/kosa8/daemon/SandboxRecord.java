package dev.kosa8.daemon;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.kosa8.egress.SandboxNetwork;
import dev.kosa8.ports.PortMapping;
import dev.kosa8.secrets.GrantedSecret;
import dev.kosa8.vm.WorkspaceTransport;
import java.time.Instant;
import java.util.List;

/**
 * What the daemon keeps on disk about a sandbox, so a restarted daemon knows
 * it, and re-attaches to its QEMU if that still runs.
 *
 * @param qemuPid      0 when no QEMU runs
 * @param qemuStarted  the QEMU process's start time, to tell it from a process that reused its pid
 * @param failure      why it failed, empty otherwise
 * @param workspace    the host folder shared with the guest, absolute; empty for none
 * @param network      network mode and allow-list; records older than networks load as none
 * @param secrets      the secrets the sandbox was given: names and placeholders, never values
 * @param image        the image it was made from, by name, and that image's config as it was then (every command
 *                     runs with it); records from before images had names were made from kosa8/debian
 * @param budget       what it may keep on disk ({@link Budget}); null in a record from before budgets: the
 *                     settings' default
 * @param ports        its published ports (docs/ports.md), each with the host port it was given; none in a record
 *                     from before ports
 * @param createdBy    who made it when not the user at a terminal, as {@code mcp:CLIENT} for a sandbox an MCP
 *                     session made ({@code kosa8 ls} shows it); empty otherwise and in older records
 */
public record SandboxRecord(String id, Instant created, boolean ephemeral, int cpus, int memoryMiB,
                            String accelerator, String imageId, SandboxState state, long qemuPid,
                            Instant qemuStarted, String failure, String workspace,
                            SandboxNetwork network,
                            List<GrantedSecret> secrets,
                            WorkspaceTransport workspaceTransport,
                            @JsonInclude(value = JsonInclude.Include.CUSTOM,
                                    valueFilter = SandboxImage.LeftOutWhenDefault.class) SandboxImage image,
                            @JsonInclude(JsonInclude.Include.NON_NULL) Budget budget,
                            @JsonInclude(JsonInclude.Include.NON_EMPTY) List<PortMapping> ports,
                            @JsonInclude(JsonInclude.Include.NON_EMPTY) String createdBy) {

    public SandboxRecord {
        if (!SandboxIds.isValid(id)) {
            throw new IllegalArgumentException("bad sandbox id: " + id);
        }
        failure = failure == null ? "" : failure;
        workspace = workspace == null ? "" : workspace;
        network = network == null ? SandboxNetwork.NONE : network;
        secrets = secrets == null ? List.of() : List.copyOf(secrets);
        workspaceTransport = workspaceTransport == null ? WorkspaceTransport.AUTO : workspaceTransport;
        image = image == null ? SandboxImage.DEFAULT : image;
        ports = ports == null ? List.of() : List.copyOf(ports);
        createdBy = createdBy == null ? "" : createdBy;
    }

    /** A sandbox made by the user (no {@code createdBy}). */
    public SandboxRecord(String id, Instant created, boolean ephemeral, int cpus, int memoryMiB, String accelerator,
                         String imageId, SandboxState state, long qemuPid, Instant qemuStarted, String failure,
                         String workspace, SandboxNetwork network, List<GrantedSecret> secrets,
                         WorkspaceTransport workspaceTransport, SandboxImage image, Budget budget,
                         List<PortMapping> ports) {
        this(id, created, ephemeral, cpus, memoryMiB, accelerator, imageId, state, qemuPid, qemuStarted, failure,
                workspace, network, secrets, workspaceTransport, image, budget, ports, "");
    }

    public SandboxRecord withCreatedBy(String who) {
        return new SandboxRecord(id, created, ephemeral, cpus, memoryMiB, accelerator, imageId, state, qemuPid,
                qemuStarted, failure, workspace, network, secrets, workspaceTransport, image, budget, ports, who);
    }

    /** A sandbox without published ports. */
    public SandboxRecord(String id, Instant created, boolean ephemeral, int cpus, int memoryMiB, String accelerator,
                         String imageId, SandboxState state, long qemuPid, Instant qemuStarted, String failure,
                         String workspace, SandboxNetwork network, List<GrantedSecret> secrets,
                         WorkspaceTransport workspaceTransport, SandboxImage image, Budget budget) {
        this(id, created, ephemeral, cpus, memoryMiB, accelerator, imageId, state, qemuPid, qemuStarted, failure,
                workspace, network, secrets, workspaceTransport, image, budget, List.of());
    }

    public SandboxRecord withPorts(List<PortMapping> next) {
        return new SandboxRecord(id, created, ephemeral, cpus, memoryMiB, accelerator, imageId, state, qemuPid,
                qemuStarted, failure, workspace, network, secrets, workspaceTransport, image, budget, next, createdBy);
    }

    /** A sandbox of kosa8's own image, without a budget of its own. */
    public SandboxRecord(String id, Instant created, boolean ephemeral, int cpus, int memoryMiB, String accelerator,
                         String imageId, SandboxState state, long qemuPid, Instant qemuStarted, String failure,
                         String workspace, SandboxNetwork network, List<GrantedSecret> secrets,
                         WorkspaceTransport workspaceTransport) {
        this(id, created, ephemeral, cpus, memoryMiB, accelerator, imageId, state, qemuPid, qemuStarted, failure,
                workspace, network, secrets, workspaceTransport, SandboxImage.DEFAULT, null);
    }

    public SandboxRecord withSecrets(List<GrantedSecret> next) {
        return new SandboxRecord(id, created, ephemeral, cpus, memoryMiB, accelerator, imageId, state, qemuPid,
                qemuStarted, failure, workspace, network, next, workspaceTransport, image, budget, ports, createdBy);
    }

    public SandboxRecord withNetwork(SandboxNetwork n) {
        return new SandboxRecord(id, created, ephemeral, cpus, memoryMiB, accelerator, imageId, state, qemuPid,
                qemuStarted, failure, workspace, n, secrets, workspaceTransport, image, budget, ports, createdBy);
    }

    /** The budget this sandbox keeps to: its own, else {@code dflt} (a record from before budgets). */
    public Budget budgetOr(Budget dflt) {
        return budget != null ? budget : dflt;
    }

    public SandboxRecord withState(SandboxState s) {
        return new SandboxRecord(id, created, ephemeral, cpus, memoryMiB, accelerator, imageId, s, qemuPid,
                qemuStarted, s == SandboxState.FAILED ? failure : "", workspace, network, secrets, workspaceTransport,
                image, budget, ports, createdBy);
    }

    public SandboxRecord failed(String why) {
        return new SandboxRecord(id, created, ephemeral, cpus, memoryMiB, accelerator, imageId, SandboxState.FAILED,
                0, null, why, workspace, network, secrets, workspaceTransport, image, budget, ports, createdBy);
    }

    public SandboxRecord withQemu(long pid, Instant started, String accel, String bootImageId) {
        return new SandboxRecord(id, created, ephemeral, cpus, memoryMiB, accel, bootImageId, state, pid, started,
                failure, workspace, network, secrets, workspaceTransport, image, budget, ports, createdBy);
    }

    public SandboxRecord stopped() {
        return new SandboxRecord(id, created, ephemeral, cpus, memoryMiB, accelerator, imageId, SandboxState.STOPPED,
                0, null, "", workspace, network, secrets, workspaceTransport, image, budget, ports, createdBy);
    }
}
