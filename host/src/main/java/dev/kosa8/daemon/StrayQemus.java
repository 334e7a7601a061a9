package dev.kosa8.daemon;

import dev.kosa8.vm.QemuCommandLine;
import dev.kosa8.vm.QemuProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The last net under a sandbox's machines: every QEMU (or the bubblewrap
 * jail around one) whose monitor socket lies in one of the sandbox's machine
 * directories ({@link SandboxLayout#machineDirs}) and that is not the one its
 * record names is killed, when the sandbox is removed and when a daemon
 * starts. The directories are this kosa8 home's own, so no other home's
 * machine matches.
 *
 * <p>Every QEMU a daemon starts is recorded (the machine's pid in the
 * sandbox's record, a standby's in its pid file) before anything can go
 * wrong, and is stopped by the paths that know it; this finds what slips
 * through anyway (a process started in the instant before a daemon was
 * killed, a jail whose first process outlived the recorded one), and says
 * so in the log: each one found is a bug to look into.
 */
final class StrayQemus {
    private static final Duration KILL_WAIT = Duration.ofSeconds(10), EXIT_WAIT = Duration.ofSeconds(2);

    private StrayQemus() {
    }

    /**
     * Kills every process of {@code dirs} but {@code keep} (the recorded
     * QEMU, or 0 for none) and the jail around or under it.
     *
     * @return how many it killed
     */
    static int end(String id, List<Path> dirs, long keep, Consumer<String> log) {
        return end(id, dirs, keep, log, scan());
    }

    /**
     * As {@link #end(String, List, long, Consumer)}, over the machines of an earlier {@link #scan} (a daemon's
     * start sweeps every sandbox from one scan of the host's processes, not one scan each); one that ended
     * since is passed over.
     */
    static int end(String id, List<Path> dirs, long keep, Consumer<String> log, List<Machine> machines) {
        int killed = 0;
        for (ProcessHandle p : of(dirs, machines)) {
            if (keep > 0 && related(p, keep)) {
                continue;
            }
            String what = p.info().command().map(c -> Path.of(c).getFileName().toString()).orElse("process");
            try {
                if (endsWithin(p, EXIT_WAIT)) {
                    continue; // on its way out already (a jail's bubblewrap, just after the QEMU under it ended)
                }
                p.destroyForcibly();
                if (!endsWithin(p, KILL_WAIT)) {
                    log.accept("sandbox " + id + ": " + what + " (pid " + p.pid() + ") no record named did not "
                            + "end within " + KILL_WAIT.toSeconds() + " s of SIGKILL; kill it by hand");
                    continue;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return killed;
            }
            killed++;
            log.accept("sandbox " + id + ": killed a " + what + " (pid " + p.pid() + ") no record named; "
                    + "please report this with the daemon's log");
        }
        return killed;
    }

    private static boolean endsWithin(ProcessHandle p, Duration wait) throws InterruptedException {
        try {
            p.onExit().get(wait.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            return true;
        } catch (java.util.concurrent.ExecutionException e) {
            return !p.isAlive();
        } catch (java.util.concurrent.TimeoutException e) {
            return false;
        }
    }

    /** A QEMU or jail on this host, and the directory of its monitor socket, as its command line tells. */
    record Machine(ProcessHandle process, Path dir) {
    }

    /** Every QEMU and jail of this host with a monitor socket, this daemon's or not: one pass over all processes. */
    static List<Machine> scan() {
        long self = ProcessHandle.current().pid();
        List<Machine> found = new ArrayList<>();
        ProcessHandle.allProcesses()
                .filter(p -> p.pid() != self && isMachine(p))
                .forEach(p -> QemuProcess.arguments(p.pid()).flatMap(QemuCommandLine::qmpSocket)
                        .map(Path::getParent).ifPresent(dir -> found.add(new Machine(p, dir))));
        return found;
    }

    /** The QEMUs and jails whose monitor socket is in one of {@code dirs}. */
    static List<ProcessHandle> of(List<Path> dirs) {
        return of(dirs, scan());
    }

    private static List<ProcessHandle> of(List<Path> dirs, List<Machine> machines) {
        return machines.stream().filter(m -> dirs.contains(m.dir())).map(Machine::process).toList();
    }

    private static boolean isMachine(ProcessHandle p) {
        String name = p.info().command().map(c -> Path.of(c).getFileName().toString()).orElse("");
        return name.startsWith("qemu-system-") || name.equals("bwrap");
    }

    /** Whether {@code p} is {@code keep}, one of its ancestors (the jail's outer bubblewrap) or under it. */
    private static boolean related(ProcessHandle p, long keep) {
        for (Optional<ProcessHandle> a = Optional.of(p); a.isPresent(); a = a.get().parent()) {
            if (a.get().pid() == keep) {
                return true;
            }
        }
        Optional<ProcessHandle> k = ProcessHandle.of(keep);
        for (Optional<ProcessHandle> a = k.flatMap(ProcessHandle::parent); a.isPresent(); a = a.get().parent()) {
            if (a.get().pid() == p.pid()) {
                return true;
            }
        }
        return false;
    }
}
