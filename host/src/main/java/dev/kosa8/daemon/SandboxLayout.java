package dev.kosa8.daemon;

import dev.kosa8.checkpoint.Undo;
import dev.kosa8.egress.Listener;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.vm.Jail;
import dev.kosa8.vm.QemuCommandLine;
import dev.kosa8.vm.QemuProcess;
import dev.kosa8.vm.Vm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Where a sandbox's files are (docs/files.md): its directory under
 * {@code sandboxes/ID} with the record, root disk and logs, and its runtime
 * directory with the sockets. Every path the daemon uses for a sandbox comes
 * from here; what lies inside {@code checkpoints/} and {@code suspended/} is
 * undo's ({@link #undo}), inside {@code ca/} the broker's.
 */
final class SandboxLayout {
    /** The subdirectory of a sandbox's runtime directory for a QEMU started while another runs. */
    static final String ALT = "alt";
    private static final List<String> MACHINE_FILES = List.of("qmp.sock", "agent.sock", "ws9p.sock", "net.sock",
            "ws9p.window", "ws9p.writes", "net.window", "vmstate.sock", "vmstate.sock.err", "incoming.sock", "console.sock",
            MemoryDump.FIFO, Standbys.PID_FILE);

    private final HostPaths paths;

    /** kosa8's own folders, which no sandbox's folder may hold ({@link OwnFolders}). */
    HostPaths paths() {
        return paths;
    }

    SandboxLayout(HostPaths paths) {
        this.paths = paths;
    }

    /** The directory that holds every sandbox's directory. */
    Path sandboxes() {
        return paths.sandboxes();
    }

    /**
     * Present while a fork is being made: a daemon that died in the middle
     * left it, and the next one removes the half-made fork (never used: its
     * id was never handed out).
     */
    Path forking(String id) {
        return directory(id).resolve("forking");
    }

    /** A fork's parent and checkpoint ("PARENT CHECKPOINT"), kept: where {@code kosa8 adopt} puts its changes. */
    Path forkedFrom(String id) {
        return directory(id).resolve("forked-from");
    }

    /**
     * The parts of a fork's folder when it is a copy-on-write view ({@link SandboxFolder}): what the record of
     * such a fork names as its folder.
     */
    Path folderView(String id) {
        return directory(id).resolve("folder-view");
    }

    Path directory(String id) {
        if (!SandboxIds.isValid(id)) {
            throw new IllegalArgumentException("bad sandbox id: " + id);
        }
        return paths.sandboxes().resolve(id);
    }

    /**
     * The placeholders of the OAuth logins made inside the sandbox, by the name under which the secret store keeps
     * each real token ({@link SandboxLogins}); never a token.
     */
    Path logins(String id) {
        return directory(id).resolve("logins.json");
    }

    /** The root disk: a qcow2 overlay on the image's (or a template's) disk; each checkpoint's disk inside it. */
    /**
     * Makes the folder in which a build sandbox's steps' layers are made
     * while its QEMU runs ({@link dev.kosa8.vm.Jail#BUILD_LAYERS}, beside its
     * root disk): made before QEMU starts, it is shown in QEMU's jail.
     */
    void makeBuildLayers(String id) {
        Path dir = directory(id).resolve(Jail.BUILD_LAYERS);
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot make the build sandbox's folder for its layers: "
                    + e.getMessage(), "check the space and permissions of " + dir.getParent());
        }
    }

    Path rootDisk(String id) {
        return directory(id).resolve("root.qcow2");
    }

    Path consoleLog(String id) {
        return directory(id).resolve("console.log");
    }

    /** QEMU's own output and the qemu-img commands run for the sandbox. */
    Path qemuLog(String id) {
        return directory(id).resolve("qemu.log");
    }

    /** The broker's audit log. */
    Path netLog(String id) {
        return directory(id).resolve("net.log");
    }

    /** The sandbox's CA, for intercepted TLS (the broker's files). */
    Path ca(String id) {
        return directory(id).resolve("ca");
    }

    /**
     * A new undo for the sandbox: its checkpoints and its pause to disk. The
     * daemon makes one per sandbox it holds ({@link Sandbox#undo}), which
     * keeps the sandbox's commit under way; its log lines name the sandbox.
     */
    Undo undo(String id, Consumer<String> log) {
        return new Undo(directory(id), id, m -> log.accept("sandbox " + id + ": " + m));
    }

    /** The sandbox's runtime directory: its sockets, the broker's in {@code net/}. */
    Path runtime(String id) {
        return paths.runtime().resolve(id);
    }

    /**
     * Where the guest's RAM of the machine in {@code machineDir} lives in file-RAM mode
     * ({@code vm.CheckpointMode.FILE_RAM}): beside the sandbox's checkpoints, on the disk that holds them (so a
     * file system with reflinks clones it into a checkpoint), never in the runtime directory, which is often a
     * tmpfs too small for a guest's memory (systemd gives {@code /run/user/UID} a tenth of the host's RAM). One
     * file per machine directory: a rewind's new machine maps its own while the old one ends.
     */
    Path memoryFile(String id, Path machineDir) {
        return directory(id).resolve("memory").resolve(machineDir.equals(runtime(id)) ? "main" : ALT);
    }

    /** Removes the files of the sandbox's machines' RAM (file-RAM mode), once no QEMU maps them; a failure is logged. */
    void cleanMemory(String id, Consumer<String> log) {
        try {
            for (Path dir : machineDirs(id)) {
                Files.deleteIfExists(memoryFile(id, dir));
            }
            Files.deleteIfExists(directory(id).resolve("memory"));
        } catch (IOException e) {
            log.accept("sandbox " + id + ": cannot remove the files of its machine's memory: " + e.getMessage());
        }
    }

    /**
     * Removes the memory file no running QEMU of the sandbox maps: the one of the machine directory other than
     * {@code inUse}'s (a daemon killed during a rewind, after the new machine started and before the old one's
     * file went, leaves it); a failure is logged.
     */
    void cleanOtherMemory(String id, Path inUse, Consumer<String> log) {
        try {
            for (Path dir : machineDirs(id)) {
                Path f = memoryFile(id, dir);
                if (!f.equals(inUse)) {
                    Files.deleteIfExists(f);
                }
            }
        } catch (IOException e) {
            log.accept("sandbox " + id + ": cannot remove a memory file no machine maps: " + e.getMessage());
        }
    }

    /** Both directories a sandbox's QEMU may keep its sockets in. */
    List<Path> machineDirs(String id) {
        return List.of(runtime(id), runtime(id).resolve(ALT));
    }

    /**
     * The directory the next QEMU of a sandbox uses: the one its running
     * QEMU ({@code current}, or null) does not (a standby starts while it
     * runs; a rewind alternates); made, private, if missing.
     */
    Path nextMachineDir(String id, Vm current) {
        Path run = runtime(id);
        return HostPaths.privateDirectory(current != null && current.spec().qmpSocket().getParent().equals(run)
                ? run.resolve(ALT) : run);
    }

    /**
     * The directory of a previous daemon's QEMU for {@code r}, as its command
     * line names it (after a rewind it may be {@value #ALT}); the runtime
     * directory when the command line cannot be read.
     */
    Path machineDirOf(SandboxRecord r) {
        return QemuProcess.arguments(r.qemuPid())
                .flatMap(QemuCommandLine::qmpSocket)
                .map(Path::getParent)
                .filter(machineDirs(r.id())::contains)
                .orElse(runtime(r.id()));
    }

    /** Removes the runtime directory and the sockets in it; a failure is logged. */
    void cleanRuntime(String id, Consumer<String> log) {
        cleanMemory(id, log);
        Path run = runtime(id);
        try {
            for (Path dir : machineDirs(id)) {
                for (String name : MACHINE_FILES) {
                    Files.deleteIfExists(dir.resolve(name));
                }
            }
            Files.deleteIfExists(run.resolve(ALT));
            for (Listener l : Listener.values()) {
                Files.deleteIfExists(run.resolve("net").resolve(l.socketName()));
            }
            Files.deleteIfExists(run.resolve("net"));
            Files.deleteIfExists(run);
        } catch (IOException e) {
            log.accept("cannot clean " + run + ": " + e.getMessage());
        }
    }

    /** The root disk of every sandbox directory on disk, whatever its record says (for prune). */
    List<Path> allRootDisks() {
        List<Path> disks = new ArrayList<>();
        if (Files.isDirectory(paths.sandboxes())) {
            try (var dirs = Files.list(paths.sandboxes())) {
                dirs.filter(Files::isDirectory).forEach(d -> disks.add(d.resolve("root.qcow2")));
            } catch (IOException e) {
                throw new KosaException(KosaException.Kind.HOST, "cannot list " + paths.sandboxes() + ": "
                        + e.getMessage(), "check the permissions of kosa8's data folder", e);
            }
        }
        return disks;
    }
}
