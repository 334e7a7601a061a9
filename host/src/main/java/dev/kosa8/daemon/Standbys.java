package dev.kosa8.daemon;

import dev.kosa8.vm.QemuProcess;
import dev.kosa8.vm.Standby;
import dev.kosa8.vm.Vm;
import dev.kosa8.vm.VmSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The sandboxes' standby QEMUs ({@link Standby}): a sandbox with a checkpoint
 * to rewind to gets one in the background after each checkpoint and rewind;
 * its next rewind loads into it; it is stopped whenever the sandbox's machine
 * ends ({@link SandboxRuntime#closeServers}). All of it under the sandbox's lock, which a rewind, a stop and a
 * removal hold too.
 *
 * <p>A standby lives in the machine directory the running QEMU does not use
 * (the sandbox's runtime directory or its {@code alt} subdirectory: a rewind
 * moves the machine from one to the other) and leaves its pid and start time
 * there ({@value #PID_FILE}), so that what a daemon killed outright leaves is
 * found: the next daemon stops every standby that is not its sandbox's
 * recorded QEMU ({@link #sweep}). A standby that became the machine was
 * recorded as its QEMU before its pid file goes.
 */
final class Standbys {
    static final String PID_FILE = "standby.pid";
    private final Consumer<String> log;

    Standbys(Consumer<String> log) {
        this.log = log;
    }

    /**
     * Starts a standby for {@code s} on a thread of its own, unless it has one
     * or its machine does not run by the time the thread holds its lock.
     *
     * @param next the spec of the machine that would replace the running one
     * @param argv the command line of a machine of that spec
     */
    void prepare(Sandbox s, Function<Sandbox, VmSpec> next, Function<VmSpec, List<String>> argv) {
        Thread.ofPlatform().daemon().name("kosa8-standby-" + s.id()).start(() -> {
            s.lock().lock();
            try {
                SandboxRuntime rt = s.runtime();
                Vm vm = rt.vm();
                if (vm == null || !vm.isAlive() || rt.standby() != null || rt.stopping()
                        || s.record().state() != SandboxState.RUNNING) {
                    return;
                }
                VmSpec spec = next.apply(s);
                if (spec.memoryFile() != null) {
                    return; // a QEMU maps its RAM file when it starts: one started now would map the file as it is
                }
                try {
                    Standby standby = Standby.start(spec, argv.apply(spec), q -> recordPid(spec, q));
                    s.update(r -> r.withStandby(standby));
                } catch (RuntimeException e) {
                    deletePidFile(spec);
                    throw e;
                }
            } catch (RuntimeException e) {
                log.accept("sandbox " + s.id() + ": no standby QEMU (" + e.getMessage()
                        + "); its next rewind starts its QEMU itself");
            } finally {
                s.lock().unlock();
            }
        });
    }

    /** Hands {@code s}'s standby, or null, to a rewind: it is the rewind's from now on. */
    static Standby take(Sandbox s) {
        Standby standby = s.runtime().standby();
        s.update(r -> r.withStandby(null));
        return standby;
    }

    /**
     * After a rewind that was handed {@code standby}: its pid file goes. The
     * standby is either the sandbox's recorded QEMU now or was stopped.
     */
    static void forget(Standby standby) {
        if (standby != null) {
            deletePidFile(standby.spec());
        }
    }

    /**
     * At daemon start, before anything of the sandbox is re-attached: stops
     * the standbys a previous daemon left in {@code dirs} unless one is the
     * sandbox's recorded QEMU ({@code recordedPid}), and removes their pid
     * files.
     */
    static void sweep(long recordedPid, List<Path> dirs, Consumer<String> log) {
        for (Path dir : dirs) {
            Path file = dir.resolve(PID_FILE);
            if (!Files.exists(file)) {
                continue;
            }
            try {
                String[] fields = Files.readString(file, StandardCharsets.US_ASCII).strip().split(" ");
                long pid = Long.parseLong(fields[0]);
                if (pid != recordedPid) {
                    QemuKill.ifSame(pid, Instant.parse(fields[1]));
                    log.accept("stopped the standby QEMU (pid " + pid + ") a previous daemon left in " + dir);
                }
            } catch (IOException | RuntimeException e) {
                log.accept("cannot read the standby QEMU recorded in " + file + " (" + e.getMessage()
                        + "); left as it is");
            }
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                log.accept("cannot delete " + file + ": " + e.getMessage());
            }
        }
    }

    /** Written as soon as the standby's QEMU runs: a daemon killed before it has the standby still leaves this. */
    private static void recordPid(VmSpec spec, QemuProcess q) {
        try {
            Files.writeString(pidFile(spec), q.pid() + " " + q.startInstant() + "\n", StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot record its pid in " + pidFile(spec) + ": "
                    + e.getMessage(), e);
        }
    }

    private static Path pidFile(VmSpec spec) {
        return spec.qmpSocket().resolveSibling(PID_FILE);
    }

    private static void deletePidFile(VmSpec spec) {
        try {
            Files.deleteIfExists(pidFile(spec));
        } catch (IOException e) {
            // the next daemon's sweep finds it names this sandbox's QEMU, or a process that is gone
        }
    }
}
