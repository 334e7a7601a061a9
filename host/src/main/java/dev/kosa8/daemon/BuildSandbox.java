package dev.kosa8.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kosa8.egress.NetMode;
import dev.kosa8.host.HostCommand;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.StepStore;
import dev.kosa8.protocol.Message;
import dev.kosa8.vm.GuestCommand;
import dev.kosa8.vm.GuestExec;
import dev.kosa8.vm.Jail;
import dev.kosa8.vm.Vm;
import dev.kosa8.vm.WorkspaceTransport;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * The sandbox an image build runs its steps in: a real kosa8 sandbox, made
 * through the daemon's own machinery (ephemeral, no workspace, the network
 * closed but for the build's {@code --allow} list, logged like any other),
 * booted from the disk the build has reached.
 *
 * <p>Each step that changes the disk gets a qcow2 layer of its own
 * ({@link #newLayer}): a new overlay file, attached under the running disk by
 * a live snapshot ({@code blockdev-add} then {@code blockdev-snapshot}), so
 * the step's writes land in it and the layer below is never written again.
 * The first layer rests on the sandbox's own disk, which holds what the boot
 * wrote; {@link #close} moves that disk beside the first layer
 * ({@link StepStore#BOOT}) and points the layer at it, so the chain of layers
 * outlives the sandbox and stands on its own.
 */
final class BuildSandbox implements AutoCloseable {
    private static final Duration QMP = Duration.ofSeconds(30);

    private final SandboxManager manager;
    private final Sandbox sandbox;
    private final Path layers;
    private final Path systemCertificates;
    private final List<Layer> made = new ArrayList<>();
    private String activeNode;
    private boolean closed;

    private BuildSandbox(SandboxManager manager, Sandbox sandbox, Path layers, Path systemCertificates) {
        this.manager = manager;
        this.sandbox = sandbox;
        this.layers = layers;
        this.systemCertificates = systemCertificates;
    }

    /**
     * Boots a build sandbox on {@code base} (its root disk the disk the build has reached).
     *
     * @param layers where the layers' directories go
     */
    static BuildSandbox start(SandboxManager manager, BootImage base, List<String> allow, Boolean trustHostCas,
                              int cpus, int memoryMiB, Path layers) {
        Sandbox s = manager.create(new SandboxManager.CreateRequest(true, cpus, memoryMiB, "auto", "",
                NetMode.CLOSED, allow, List.of(), WorkspaceTransport.AUTO, trustHostCas, "", List.of(), List.of(),
                Budget.Change.NONE, List.of()), base);
        return new BuildSandbox(manager, s, layers, base.systemCertificates());
    }

    String id() {
        return sandbox.id();
    }

    /** The sandbox's network audit log, where a step's refused connections are. */
    Path auditLog() {
        return manager.networks().auditLog(sandbox);
    }

    private Vm vm() {
        return sandbox.running();
    }

    /**
     * A new layer for the next step: a directory of its own under the layers' folder, an overlay of the running
     * disk made the disk QEMU writes from now on. Returns where the layer's file is kept once the sandbox
     * ends ({@link #close}); until then it is in the sandbox's own folder ({@link #whileRunning}).
     */
    Path newLayer() throws IOException {
        Vm vm = vm();
        if (activeNode == null) {
            activeNode = rootNode(vm);
        }
        Path backing = made.isEmpty() ? manager.rootDisk(sandbox) : made.getLast().staged();
        String name = UUID.randomUUID().toString().replace("-", "");
        // made in the build sandbox's own folder, which QEMU's jail shows it (Jail.BUILD_LAYERS), and moved to
        // the layers' folder when the sandbox ends (close); its header names where the layer below will be then
        Path dir = manager.rootDisk(sandbox).resolveSibling(Jail.BUILD_LAYERS).resolve(name);
        Files.createDirectories(dir);
        Path layer = dir.resolve(StepStore.LAYER);
        if (made.isEmpty()) {
            HostCommand.of("qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b",
                            backing.toAbsolutePath().toString(), layer.toString())
                    .run(KosaException.Kind.VM, "creating a build step's layer");
        } else {
            // named by where the layer below will be kept, which is not there yet: made without opening it (-u), of
            // its size; QEMU takes the layer below from the running chain (blockdev-add with no backing, below)
            HostCommand.of("qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-u", "-b",
                            made.getLast().kept().toString(), layer.toString(),
                            Long.toString(DiskUsage.virtualSize(backing)))
                    .run(KosaException.Kind.VM, "creating a build step's layer");
        }
        if (Files.isRegularFile(systemCertificates)) {
            // what the guest's Java store is made from, for the sandboxes of a later session on this layer
            Files.copy(systemCertificates, dir.resolve(dev.kosa8.image.Image.SYSTEM_CERTIFICATES),
                    StandardCopyOption.REPLACE_EXISTING);
        }
        String node = "kosa8-layer-" + made.size();
        vm.qmp().execute("blockdev-add", Map.of("driver", "qcow2", "node-name", node, "discard", "unmap",
                "file", Map.of("driver", "file", "filename", layer.toString()), "backing", nullValue()), QMP);
        vm.qmp().execute("blockdev-snapshot", Map.of("node", activeNode, "overlay", node), QMP);
        activeNode = node;
        Layer l = new Layer(layer, layers.resolve(name).resolve(StepStore.LAYER));
        made.add(l);
        return l.kept();
    }

    /** Where the layer to be kept at {@code kept} is while the sandbox runs: a file beside it goes there too. */
    Path whileRunning(Path kept) {
        return made.stream().filter(l -> l.kept().equals(kept)).findFirst().map(Layer::staged)
                .orElseThrow(() -> new IllegalArgumentException("not a layer of this build sandbox: " + kept));
    }

    /** A step's layer: where it is made and written ({@code staged}), and where it is kept once the sandbox ends. */
    private record Layer(Path staged, Path kept) {
    }

    private static Object nullValue() {
        return com.fasterxml.jackson.databind.node.NullNode.getInstance();
    }

    /** The node name of the root disk's active image. */
    private static String rootNode(Vm vm) {
        JsonNode blocks = vm.qmp().execute("query-block", Map.of(), QMP);
        for (JsonNode b : blocks) {
            if ("root".equals(b.path("device").asText())) {
                String node = b.path("inserted").path("node-name").asText("");
                if (!node.isEmpty()) {
                    return node;
                }
            }
        }
        throw new KosaException(KosaException.Kind.VM, "the build sandbox's QEMU shows no root disk node",
                "see the daemon's log");
    }

    /** Runs a step's command, streaming its input and output. */
    GuestExec.Exit exec(Message.ExecSpec spec, InputStream stdin, Consumer<byte[]> out, Consumer<byte[]> err,
                        Duration timeout) {
        return GuestExec.run(vm().agent(), spec, stdin, out, err, timeout);
    }

    /** Runs a short command of kosa8's own as root and returns its result. */
    GuestCommand.Result run(List<String> argv, Duration timeout) {
        return GuestCommand.run(vm().agent(), argv, timeout);
    }

    /** Writes files in the guest as root, through the agent. */
    void putFiles(List<GuestCommand.GuestFile> files) {
        GuestCommand.putFiles(vm().agent(), files, Duration.ofMinutes(1));
    }

    /** Puts what the guest wrote on the disk (a step's layer is complete once this returns). */
    void sync() {
        GuestCommand.Result r = GuestCommand.run(vm().agent(), List.of("sync"), Duration.ofMinutes(5));
        if (r.exitCode() != 0) {
            throw new KosaException(KosaException.Kind.VM, "sync in the build sandbox failed: " + r.stderr().strip(),
                    "see the build log");
        }
    }

    /**
     * Shuts the sandbox down, keeps its boot disk under the first layer (moved beside it and the layer pointed at
     * it), and removes the sandbox. Safe to call twice.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        KosaException failure = null;
        try {
            manager.stop(sandbox, true);
            for (Layer l : made) {
                Files.createDirectories(layers);
                Files.move(l.staged().getParent(), l.kept().getParent(), StandardCopyOption.ATOMIC_MOVE);
            }
            if (!made.isEmpty()) {
                Path first = made.getFirst().kept();
                Path boot = first.resolveSibling(StepStore.BOOT);
                Files.move(manager.rootDisk(sandbox), boot, StandardCopyOption.ATOMIC_MOVE);
                HostCommand.of("qemu-img", "rebase", "-u", "-f", "qcow2", "-F", "qcow2", "-b", boot.toString(),
                        first.toString()).run(KosaException.Kind.VM, "pointing the first layer at its boot disk");
            }
        } catch (IOException | RuntimeException e) {
            failure = new KosaException(KosaException.Kind.VM, "cannot keep the build's layers: " + e.getMessage(),
                    "build again; the steps are made afresh", e);
        } finally {
            manager.remove(sandbox, true);
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Kills the sandbox now (a cancelled build): the step running fails and the build ends. */
    void kill() {
        Vm vm = sandbox.vm();
        if (vm != null) {
            vm.kill();
        }
    }
}
