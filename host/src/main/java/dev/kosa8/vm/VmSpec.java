package dev.kosa8.vm;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything needed to start one sandbox's QEMU process. A value: building the
 * command line from it is a pure function ({@link QemuCommandLine}).
 *
 * @param name          sandbox id, used for QEMU's process name
 * @param accelerator   how to run guest code
 * @param cpus          virtual CPUs
 * @param memoryMiB     guest RAM
 * @param kernel        uncompressed vmlinux with a PVH entry
 * @param initramfs     the kosa8 initramfs
 * @param rootDisk      this sandbox's qcow2 overlay over the image's root disk
 * @param kernelArgs    kernel command line (microvm adds its virtio-mmio words)
 * @param consoleLog    where the serial console is written
 * @param qmpSocket     QMP's unix socket
 * @param agentSocket   the unix socket behind the agent's virtio-serial port
 * @param workspaceSocket the unix socket behind the workspace's virtio-serial port (9p to the
 *                      daemon's server), or null for a sandbox with no workspace
 * @param netSocket     the unix socket behind the network link's virtio-serial port, which the daemon joins to
 *                      the sandbox's egress broker ({@code dev.kosa8.protocol.NetLink}); null for a sandbox with no
 *                      network at all. The network window's file lies beside it ({@link #netWindow})
 * @param jail          the jail QEMU runs in ({@link Jail#NONE}: none)
 * @param consoleLimit  the most bytes of console output kept on the host ({@link ConsoleLog})
 * @param memoryFile    where the guest's RAM lives as a shared file ({@link CheckpointMode#FILE_RAM}), or null for
 *                      QEMU's own anonymous memory
 * @param arch          the guest's architecture ({@link GuestArch}): the machine type, its QEMU program
 */
public record VmSpec(String name, Accelerator accelerator, int cpus, int memoryMiB, Path kernel, Path initramfs,
                     Path rootDisk, String kernelArgs, Path consoleLog, Path qmpSocket, Path agentSocket,
                     Path workspaceSocket, Path netSocket, Jail jail, long consoleLimit, Path memoryFile,
                     GuestArch arch) {

    public static final int MIN_MEMORY_MIB = 256;
    public static final int MAX_CPUS = 64;
    /** The console output kept on the host unless the host's settings say otherwise: 4 MiB. */
    public static final long DEFAULT_CONSOLE_LIMIT = 4L << 20;
    /** The least a console limit may be: room for a boot's messages. */
    public static final long MIN_CONSOLE_LIMIT = 64L << 10;

    /** A machine of this host's architecture whose RAM is QEMU's own anonymous memory. */
    public VmSpec(String name, Accelerator accelerator, int cpus, int memoryMiB, Path kernel, Path initramfs,
                  Path rootDisk, String kernelArgs, Path consoleLog, Path qmpSocket, Path agentSocket,
                  Path workspaceSocket, Path netSocket, Jail jail, long consoleLimit) {
        this(name, accelerator, cpus, memoryMiB, kernel, initramfs, rootDisk, kernelArgs, consoleLog, qmpSocket,
                agentSocket, workspaceSocket, netSocket, jail, consoleLimit, null, null);
    }

    /** A machine with the default console limit and no jail (tests, benchmarks; the daemon sets both). */
    public VmSpec(String name, Accelerator accelerator, int cpus, int memoryMiB, Path kernel, Path initramfs,
                  Path rootDisk, String kernelArgs, Path consoleLog, Path qmpSocket, Path agentSocket,
                  Path workspaceSocket, Path netSocket) {
        this(name, accelerator, cpus, memoryMiB, kernel, initramfs, rootDisk, kernelArgs, consoleLog, qmpSocket,
                agentSocket, workspaceSocket, netSocket, Jail.NONE, DEFAULT_CONSOLE_LIMIT);
    }

    /** A machine with no network. */
    public VmSpec(String name, Accelerator accelerator, int cpus, int memoryMiB, Path kernel, Path initramfs,
                  Path rootDisk, String kernelArgs, Path consoleLog, Path qmpSocket, Path agentSocket,
                  Path workspaceSocket) {
        this(name, accelerator, cpus, memoryMiB, kernel, initramfs, rootDisk, kernelArgs, consoleLog, qmpSocket,
                agentSocket, workspaceSocket, null);
    }

    public VmSpec {
        jail = jail == null ? Jail.NONE : jail;
        arch = arch == null ? GuestArch.host() : arch;
        List<String> problems = new ArrayList<>();
        if (consoleLimit < MIN_CONSOLE_LIMIT) {
            problems.add("the console limit must be at least " + (MIN_CONSOLE_LIMIT >> 10) + " KiB, not "
                    + consoleLimit + " bytes");
        }
        if (cpus < 1 || cpus > MAX_CPUS) {
            problems.add("cpus must be between 1 and " + MAX_CPUS + ", not " + cpus);
        }
        if (memoryMiB < MIN_MEMORY_MIB) {
            problems.add("memory must be at least " + MIN_MEMORY_MIB + " MiB, not " + memoryMiB);
        }
        for (Path socket : java.util.Arrays.asList(qmpSocket, agentSocket, workspaceSocket, netSocket,
                qmpSocket == null ? null : qmpSocket.resolveSibling("console.sock"))) {
            if (socket != null && socket.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length
                    > dev.kosa8.host.UnixSocketPaths.MAX_BYTES) {
                problems.add("socket path is longer than a unix socket allows here ("
                        + dev.kosa8.host.UnixSocketPaths.MAX_BYTES + " bytes): " + socket);
            }
        }
        if (!problems.isEmpty()) {
            throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.USAGE,
                    "invalid sandbox settings: " + String.join("; ", problems), "fix the values and try again");
        }
    }

    /** This machine with {@code jail} and {@code consoleLimit}: the host's settings, which the daemon applies. */
    public VmSpec confined(Jail jail, long consoleLimit) {
        return new VmSpec(name, accelerator, cpus, memoryMiB, kernel, initramfs, rootDisk, kernelArgs, consoleLog,
                qmpSocket, agentSocket, workspaceSocket, netSocket, jail, consoleLimit, memoryFile, arch);
    }

    /**
     * This machine with its RAM in {@code file}, shared ({@link CheckpointMode#FILE_RAM}); null: QEMU's anonymous
     * memory.
     */
    public VmSpec withMemoryFile(Path file) {
        return new VmSpec(name, accelerator, cpus, memoryMiB, kernel, initramfs, rootDisk, kernelArgs, consoleLog,
                qmpSocket, agentSocket, workspaceSocket, netSocket, jail, consoleLimit, file, arch);
    }

    /** This machine with a guest of {@code arch}. */
    public VmSpec withArch(GuestArch arch) {
        return new VmSpec(name, accelerator, cpus, memoryMiB, kernel, initramfs, rootDisk, kernelArgs, consoleLog,
                qmpSocket, agentSocket, workspaceSocket, netSocket, jail, consoleLimit, memoryFile, arch);
    }

    /**
     * The unix socket QEMU puts the guest's serial console on, beside its
     * monitor's; the daemon reads it into {@link #consoleLog} ({@link ConsolePump}).
     */
    public Path consoleSocket() {
        return qmpSocket.resolveSibling("console.sock");
    }

    /** The size of the workspace's read window: 16 slots of one 1 MiB reply each. */
    public static final long WORKSPACE_WINDOW_BYTES = 16L << 20;

    /**
     * The file QEMU gives the guest as the workspace's read window, a
     * read-only disk the 9p server writes large replies' data into
     * ({@code dev.kosa8.workspace.ReadWindow}), beside the workspace's
     * socket; null without a workspace. Made afresh for each QEMU.
     */
    public Path workspaceWindow() {
        return workspaceSocket == null ? null : workspaceSocket.resolveSibling("ws9p.window");
    }

    /**
     * The file QEMU gives the guest as the network window, a read-only disk the network link writes a stream's
     * larger pieces into ({@code dev.kosa8.egress.NetWindow}), beside the network's socket; null without a network.
     * Made afresh for each QEMU, {@code NetLink.WINDOW_BYTES} long.
     */
    public Path netWindow() {
        return netSocket == null ? null : netSocket.resolveSibling("net.window");
    }

    /** The size of the workspace's write window: 16 slots of one 1 MiB request each. */
    public static final long WORKSPACE_WRITES_BYTES = 16L << 20;

    /**
     * The file QEMU gives the guest as the workspace's write window, a disk
     * the guest's relay writes large requests' data to and the 9p server
     * reads ({@code dev.kosa8.workspace.WriteWindow}), beside the
     * workspace's socket; null without a workspace. Made afresh for each QEMU.
     */
    public Path workspaceWrites() {
        return workspaceSocket == null ? null : workspaceSocket.resolveSibling("ws9p.writes");
    }
}
