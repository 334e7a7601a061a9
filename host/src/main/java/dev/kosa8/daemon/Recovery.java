package dev.kosa8.daemon;

import dev.kosa8.egress.NetMode;
import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.Limits;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * At daemon start: loads every sandbox's record and re-attaches to the
 * machines a previous daemon left running (by pid <em>and</em> process start
 * time, so a reused pid is never mistaken for one): their broker and folder
 * served again, a checkpoint or rewind it died in the middle of recovered,
 * a checkpoint it was still committing marked failed.
 * What cannot be re-attached is marked failed, saying why; ephemeral
 * sandboxes and half-done removals are finished off.
 *
 * <p>Two phases, so that the daemon can listen in between: {@link #load}
 * reads the records and finishes what needs no machine (quick), and
 * {@link #reattach} then joins each running machine, one thread each. A
 * request for a sandbox still being joined waits on it
 * ({@link Sandbox#awaitAttached}); the others are served at once. A CLI that
 * started the daemon thus finds its socket within its 20 s wait however long
 * the re-attachments take (a folder to remount under load took longer).
 */
final class Recovery {
    private final SandboxLayout layout;
    private final SandboxStore store;
    private final SandboxRegistry registry;
    private final MachineLauncher launcher;
    private final SandboxNetworks networks;
    private final MachineWatch watch;
    private final TurnCheckpoints turns;
    private final Consumer<String> log;
    /** The machines {@link #load} found running, to re-attach. */
    private final List<Sandbox> toAttach = new ArrayList<>();

    Recovery(SandboxLayout layout, SandboxStore store, SandboxRegistry registry, MachineLauncher launcher,
             SandboxNetworks networks, MachineWatch watch, TurnCheckpoints turns,
             Consumer<String> log) {
        this.turns = turns;
        this.layout = layout;
        this.store = store;
        this.registry = registry;
        this.launcher = launcher;
        this.networks = networks;
        this.watch = watch;
        this.log = log;
    }

    /** Loads every record; those whose machine may still run are registered waiting for {@link #reattach}. */
    void load() {
        List<StrayQemus.Machine> machines = StrayQemus.scan();
        for (SandboxRecord r : store.loadAll(log)) {
            boolean running = (r.state() == SandboxState.RUNNING || r.state() == SandboxState.STARTING)
                    && !r.ephemeral();
            Sandbox s = new Sandbox(r, layout.undo(r.id(), log), layout.folderView(r.id()), running);
            registry.add(s);
            Standbys.sweep(r.qemuPid(), layout.machineDirs(r.id()), log);
            StrayQemus.end(r.id(), layout.machineDirs(r.id()), r.qemuPid(), log, machines);
            if (java.nio.file.Files.exists(layout.forking(r.id()))) {
                // a fork the previous daemon died making: nobody was given its id; it goes, QEMU included
                log.accept("removing sandbox " + r.id() + ", a fork left half-made by a previous daemon");
                ForkFolder folder = forkFolder(r);
                discardLeftover(s);
                if (folder != null) {
                    try {
                        folder.takeBack(); // as Forks does when a fork fails: the same --workspace works again
                    } catch (java.io.IOException e) {
                        log.accept("sandbox " + r.id() + ": cannot empty the half-made fork's folder "
                                + folder.path() + ": " + e + "; delete it by hand");
                    }
                }
                continue;
            }
            for (String failed : s.undo().recover()) {
                log.accept("sandbox " + r.id() + ": checkpoint " + failed + " was being committed by a daemon that"
                        + " stopped; marked failed");
            }
            if (r.state() != SandboxState.RUNNING && r.state() != SandboxState.STARTING) {
                if (r.state() == SandboxState.REMOVING) {
                    // the daemon died half-way through a removal: finish it, QEMU included
                    discardLeftover(s);
                }
                continue;
            }
            if (r.ephemeral()) {
                // its client went away with the old daemon: nobody can use it now
                log.accept("removing ephemeral sandbox " + r.id() + " left by a previous daemon");
                discardLeftover(s);
                continue;
            }
            toAttach.add(s);
        }
        for (Sandbox s : registry.all()) {
            if (!toAttach.contains(s)) {
                s.attached(); // finished off above, or left as it was: nothing to wait for
            }
        }
    }

    /**
     * Re-attaches to every machine {@link #load} found, each on its own
     * thread so that a slow one keeps no other waiting; returns when all are
     * done. Each sandbox's requests are let through as soon as its own is.
     */
    void reattach() {
        if (!toAttach.isEmpty()) {
            awaitTheLastDaemonsGoing();
        }
        List<Thread> threads = new ArrayList<>();
        for (Sandbox s : toAttach) {
            threads.add(Thread.ofPlatform().name("reattach-" + s.id()).start(() -> {
                try {
                    s.locked(() -> reattach(s, s.record()));
                } catch (RuntimeException e) { // a bug, not a lost machine: said, and the other sandboxes go on
                    log.accept("sandbox " + s.id() + ": re-attaching failed: " + e);
                } finally {
                    s.attached();
                }
            }));
        }
        toAttach.clear();
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * How long after the daemon before went this one may first speak to its guests: longer than their agents
     * take to count a host gone ({@link Limits#HOST_GONE_MILLIS}). Sooner, an agent still in the middle of a frame
     * the daemon before was cut off in (a file being copied in, a download) would read this daemon's Hello as the
     * rest of it, and the sandbox would be lost to a handshake that never ends.
     */
    static final Duration AFTER_THE_LAST_DAEMON = Duration.ofMillis(Limits.HOST_GONE_MILLIS + 500);

    /**
     * Waits out {@link #AFTER_THE_LAST_DAEMON} from this daemon's start, which came after the last one went: nothing
     * when the restart itself took that long. The start is the JVM's own uptime, a monotonic clock: the process's
     * start instant is counted from a boot time in whole seconds and may be a second off
     * ({@link dev.kosa8.vm.QemuProcess#SAME_START}).
     */
    private void awaitTheLastDaemonsGoing() {
        Duration left = leftToWait(Duration.ofMillis(java.lang.management.ManagementFactory.getRuntimeMXBean()
                .getUptime()));
        if (left.isPositive()) {
            try {
                Thread.sleep(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** What is left of {@link #AFTER_THE_LAST_DAEMON} for a daemon that has been up for {@code uptime}. */
    static Duration leftToWait(Duration uptime) {
        Duration left = AFTER_THE_LAST_DAEMON.minus(uptime);
        return left.isNegative() ? Duration.ZERO : left;
    }

    private void reattach(Sandbox s, SandboxRecord r) {
        try {
            var vm = dev.kosa8.vm.Vm.reattach(launcher.specs().running(r, layout.machineDirOf(r)), r.qemuPid(),
                    r.qemuStarted(), Duration.ofSeconds(20));
            s.update(rt -> rt.withVm(vm));
            try {
                if (s.undo().recoverInterrupted(vm)) {
                    log.accept("sandbox " + r.id() + ": a checkpoint or rewind was cut short; its processes run on");
                }
            } catch (RuntimeException | IOException e) {
                log.accept("sandbox " + r.id() + ": cannot thaw its processes: " + e.getMessage());
            }
            if (r.network().mode() != NetMode.NONE) {
                var broker = networks.startBroker(r);
                s.update(rt -> rt.withBroker(broker));
                // the guest's connections of the daemon before are reset; new ones reach this daemon's broker
                launcher.attachNetwork(s, vm.spec());
                launcher.awaitNetwork(s, Duration.ofSeconds(20)); // a live guest answers at once
            }
            s.record(r.withState(SandboxState.RUNNING));
            if (!r.workspace().isEmpty()) {
                java.nio.file.Path folder = null;
                try {
                    folder = s.folder();
                } catch (KosaException e) { // a view that cannot be mounted: the machine runs on, as reconnect says
                    s.update(rt -> rt.workspaceLost(true));
                    log.accept("sandbox " + r.id() + ": " + e.getMessage() + "; its folder answers errors until it "
                            + "is stopped and started");
                }
                if (folder != null) {
                    launcher.folders().reconnect(s, vm, folder);
                }
            }
            watch.watch(s, vm);
            turns.attach(s, vm);
            turns.woke(s, vm, null, null); // asks sent to the daemon that died are answered by no one else
            layout.cleanOtherMemory(r.id(), vm.spec().memoryFile(), log);
            log.accept("re-attached to sandbox " + r.id() + " (QEMU pid " + r.qemuPid() + ")");
        } catch (KosaException e) {
            QemuKill.ifSame(r.qemuPid(), r.qemuStarted());
            try {
                if (s.undo().forgetInterrupted()) {
                    log.accept("sandbox " + r.id() + ": a checkpoint or rewind was cut short with its machine");
                }
            } catch (IOException io) {
                log.accept("sandbox " + r.id() + ": cannot clear its in-progress mark: " + io.getMessage());
            }
            s.record(r.failed("lost while the daemon was down: " + e.getMessage()));
            store.save(s.record());
            log.accept("sandbox " + r.id() + ": " + e.getMessage());
        }
    }

    /** Stops a previous daemon's QEMU for the sandbox, if it still runs, and removes its files. */
    /** The half-made fork's folder as its marker describes it; null if none or not described (an older daemon). */
    private ForkFolder forkFolder(SandboxRecord r) {
        if (r.workspace().isEmpty()) {
            return null;
        }
        try {
            List<String> lines = java.nio.file.Files.readAllLines(layout.forking(r.id()));
            return lines.size() < 2 ? null : ForkFolder.fromMarker(java.nio.file.Path.of(r.workspace()), lines.get(1));
        } catch (java.io.IOException e) {
            return null;
        }
    }

    private void discardLeftover(Sandbox s) {
        SandboxRecord r = s.record();
        QemuKill.ifSame(r.qemuPid(), r.qemuStarted());
        try {
            new SandboxHeld(layout, registry, log).keepOnRemove(r.id(), false);
        } catch (RuntimeException e) {
            log.accept("sandbox " + r.id() + ": " + e.getMessage());
        }
        try {
            store.delete(r.id());
            layout.cleanRuntime(r.id(), log);
            registry.remove(r.id());
        } catch (IOException | RuntimeException e) { // said, never thrown: the daemon starts whatever is left
            log.accept("sandbox " + r.id() + ": cannot delete the files of sandbox " + r.id() + ": "
                    + e.getMessage() + "; delete " + layout.directory(r.id()) + " by hand");
        }
    }
}
