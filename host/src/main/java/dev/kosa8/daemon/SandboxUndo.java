package dev.kosa8.daemon;

import dev.kosa8.checkpoint.Checkpoint;
import dev.kosa8.checkpoint.CheckpointLimits;
import dev.kosa8.checkpoint.Undo;
import dev.kosa8.host.KosaException;
import dev.kosa8.vm.QemuCommandLine;
import dev.kosa8.vm.Vm;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A sandbox's undo as the API asks for it (docs/checkpoints.md): checkpoint,
 * rewind (to a checkpoint or to before a turn), fork, list and remove. Each
 * runs under the sandbox's lock where it touches the machine, checks the
 * sandbox's state and disk budget, and hands the work to the sandbox's
 * {@link Undo}; a rewind relaunches the machine through {@link
 * MachineLauncher}, and every checkpoint or rewind readies a {@link Standbys}
 * QEMU for the next rewind.
 */
final class SandboxUndo {
    private final SandboxLayout layout;
    private final SandboxStore store;
    private final MachineLauncher launcher;
    private final Standbys standbys;
    private final Forks forks;
    private final TurnCheckpoints turns;
    private final String qemuBinary;
    private final Consumer<String> log;

    SandboxUndo(SandboxLayout layout, SandboxStore store, MachineLauncher launcher, Standbys standbys, Forks forks,
                TurnCheckpoints turns, String qemuBinary, Consumer<String> log) {
        this.layout = layout;
        this.store = store;
        this.launcher = launcher;
        this.standbys = standbys;
        this.forks = forks;
        this.turns = turns;
        this.qemuBinary = qemuBinary;
        this.log = log;
    }

    /**
     * Takes a checkpoint of a running sandbox and returns it pending ({@link #checkpoint(Sandbox, String,
     * boolean)}).
     */
    Checkpoint checkpoint(Sandbox s, String message) {
        return checkpoint(s, message, false);
    }

    /**
     * Takes a checkpoint of a running sandbox (docs/checkpoints.md) within its disk budget and checkpoint
     * limits: returns it pending once its instant is fixed, or with {@code wait} once it is committed. The
     * commit needs no lock: the sandbox serves meanwhile. Its RAM is kept room for by the admission; what its
     * folder copy took is checked at the instant.
     */
    Checkpoint checkpoint(Sandbox s, String message, boolean wait) {
        return checkpoint(s, message, wait, Set.of());
    }

    /**
     * A turn checkpoint (docs/agents.md): as {@link #checkpoint(Sandbox, String, boolean)}, but at the sandbox's
     * checkpoint limits its oldest turn checkpoints are removed to make room, never one the user took.
     */
    Checkpoint turnCheckpoint(Sandbox s, String message) {
        return checkpoint(s, message, false, turns.byCheckpoint(s, checkpointBytes(s).keySet()).keySet());
    }

    private Checkpoint checkpoint(Sandbox s, String message, boolean wait, Set<String> thinnable) {
        long asked = System.nanoTime();
        Checkpoint c = s.locked(() -> {
            long locked = System.nanoTime();
            Vm vm = s.running();
            Budget b = launcher.specs().budget(s.record());
            Undo undo = undo(s);
            DiskUsage before = DiskUsage.of(layout, s.id(), undo, spooled(s));
            DiskBudget.admitCheckpoint(s.id(), s.record().memoryMiB(), b, before);
            long admitted = System.nanoTime();
            Checkpoint taken = undo.checkpoint(machine(s, vm), message, new CheckpointLimits(b.checkpointCount(),
                    b.checkpointBytes(), thinnable));
            long instant = System.nanoTime();
            // what a checkpoint adds is in undo's files alone (its disk snapshot is metadata in the root disk):
            // measured again, the disk and the other files would cost the command their walks
            DiskUsage after = before.withCheckpoints(undo);
            long measured = System.nanoTime();
            if (!DiskBudget.fits(after, b, s.record().memoryMiB())) {
                undo.remove(taken.id(), machine(s, vm), null);
                throw new KosaException(KosaException.Kind.LIMIT, "checkpoint " + taken.id() + " took sandbox "
                        + s.id() + " past its disk budget of " + DiskBudget.gib(b.diskBytes()) + " (it kept "
                        + DiskBudget.gib(after.total()) + "), and was removed again",
                        "remove older checkpoints with `kosa8 checkpoint rm " + s.id() + " ID`, or make the workspace"
                                + " or its held changes (`kosa8 review " + s.id() + "`) smaller, then try again");
            }
            prepareStandby(s);
            // where a checkpoint's wall time goes in the daemon (issue 37): bench/wall.sh reads this line
            log.accept("checkpoint " + taken.id() + " of sandbox " + s.id() + " returned: lock " + ms(asked, locked)
                    + " ms, admission " + ms(locked, admitted) + " ms, instant " + ms(admitted, instant)
                    + " ms " + taken.stepMillis() + ", measured after " + ms(instant, measured) + " ms, standby "
                    + ms(measured, System.nanoTime()) + " ms");
            return taken;
        });
        return wait ? undo(s).awaitCommit(c.id()) : c;
    }

    /** The request bodies the broker of {@code s} holds on disk now: they count in its disk budget. */
    private static long spooled(Sandbox s) {
        var broker = s.broker();
        return broker == null ? 0 : broker.spooledBytes();
    }

    /** A checkpoint by its id or a unique prefix; with {@code wait}, once committed (a failed one is an error). */
    Checkpoint findCheckpoint(Sandbox s, String idOrPrefix, boolean wait) {
        return wait ? undo(s).awaitCommit(idOrPrefix) : undo(s).find(idOrPrefix);
    }

    /** Rewinds a running sandbox in place to a checkpoint (an id or a unique prefix; empty: the latest). */
    Undo.Rewound rewind(Sandbox s, String checkpoint) {
        return s.locked(() -> {
            Vm vm = s.running();
            Undo.Rewound done;
            try {
                done = undo(s).rewind(machine(s, vm), checkpoint,
                        (state, server, beforeServe) -> launcher.relaunch(s, state, server, beforeServe));
            } catch (KosaException e) {
                if (s.vm() == vm && !vm.isAlive()) {
                    // the old machine is gone and no new one runs: the sandbox is stopped, its disk at the checkpoint
                    s.update(rt -> rt.withVm(null));
                    s.closeServers();
                    save(s, s.record().failed(MachineLauncher.firstLine(e.getMessage())));
                    layout.cleanRuntime(s.id(), log);
                }
                throw e;
            }
            log.accept("sandbox " + s.id() + " rewound to " + done.checkpoint().id() + " " + done.stepMillis());
            turns.woke(s, s.vm(), done.checkpoint(), turns.log(s.id()));
            prepareStandby(s);
            return done;
        });
    }

    /**
     * Rewinds a running sandbox in place to just before turn {@code turn} (docs/agents.md): to the checkpoint the
     * guest asked for then. The tool call that turn was about does not run: its hook is told the sandbox was put back.
     */
    Undo.Rewound rewindToTurn(Sandbox s, int turn) {
        return rewind(s, turns.checkpointOf(s, turn, checkpointBytes(s).keySet()));
    }

    /** Which of {@code s}'s checkpoints are turns, and which turn each is. */
    Map<String, Integer> turnsOf(Sandbox s) {
        Map<String, Integer> out = new HashMap<>();
        turns.byCheckpoint(s, checkpointBytes(s).keySet()).forEach((id, t) -> out.put(id, t.turn()));
        return out;
    }

    /** Each checkpoint's bytes as its record gives them: machine state and folder files it stored. */
    Map<String, Long> checkpointBytes(Sandbox s) {
        Map<String, Long> out = new HashMap<>();
        undo(s).records().forEach(c -> out.put(c.id(), c.vmStateBytes() + c.workspaceBytesCopied()));
        return out;
    }

    /**
     * A new persistent sandbox from a checkpoint of {@code parent} ({@link Forks}), marked as made by
     * {@code createdBy} (empty: as its parent is), its folder made as {@code folder} says.
     */
    Sandbox fork(Sandbox parent, String checkpoint, String workspace, String createdBy, ForkFolderChoice.Mode folder) {
        return forks.fork(parent, checkpoint, workspace, createdBy, folder);
    }

    /** The committed checkpoints, oldest first, each with the bytes on disk only it holds. */
    List<Undo.Listed> checkpoints(Sandbox s) {
        return undo(s).list(!s.record().workspace().isEmpty());
    }

    Checkpoint removeCheckpoint(Sandbox s, String checkpoint) {
        return s.locked(() -> {
            SandboxState st = s.record().state();
            Vm vm = s.vm();
            if (vm != null && st == SandboxState.RUNNING) {
                return undo(s).remove(checkpoint, machine(s, vm), null);
            }
            if (st == SandboxState.STOPPED || st == SandboxState.FAILED) {
                // no QEMU holds the disk: qemu-img removes the disk snapshot
                return undo(s).remove(checkpoint, null, layout.rootDisk(s.id()));
            }
            undo(s).find(checkpoint); // a checkpoint that is not there is said first, as before
            throw new KosaException(KosaException.Kind.STATE, "sandbox " + s.id() + " is "
                    + s.record().state().label(), "wait for it, then try again");
        });
    }

    private static Undo undo(Sandbox s) {
        return s.undo();
    }

    /** The running machine as undo sees it: with its folder's server when it shares one. */
    static Undo.Machine machine(Sandbox s, Vm vm) {
        String ws = s.record().workspace();
        return new Undo.Machine(vm, ws.isEmpty() ? null : s.workspace(), ws.isEmpty() ? null : s.folder());
    }

    /** After a checkpoint or a rewind: a standby QEMU for the next rewind, in the background. */
    private static long ms(long from, long to) {
        return (to - from) / 1_000_000;
    }

    private void prepareStandby(Sandbox s) {
        standbys.prepare(s, launcher::nextSpec, spec -> QemuCommandLine.of(spec, qemuBinary));
    }

    private void save(Sandbox s, SandboxRecord r) {
        s.record(r);
        store.save(r);
    }
}
