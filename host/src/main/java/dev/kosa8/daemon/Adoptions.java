package dev.kosa8.daemon;

import dev.kosa8.checkpoint.AdoptPlan;
import dev.kosa8.checkpoint.FolderEdit;
import dev.kosa8.host.KosaException;
import dev.kosa8.workspace.FolderAdopter;
import dev.kosa8.workspace.HeldChanges;
import dev.kosa8.workspace.WorkspaceServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * {@code kosa8 adopt}: one fork's changes to its folder since it was forked, written into another sandbox's
 * folder (by default the one it was forked from), after the same conflict check as accepting held changes: a
 * path the target changed since the instant is shown, not overwritten ({@link AdoptPlan}); a path the target's
 * held policy covers goes to its held layer, for {@code kosa8 review} ({@link FolderAdopter}). Both folders are
 * held still meanwhile (their servers paused, both sandboxes locked, the lower id first).
 */
final class Adoptions {
    /** What an adoption did (or, dry, would do). */
    record Result(String fork, String into, String folder, boolean dryRun, List<String> applied, List<String> held,
                  List<String> conflicts, List<String> already, List<String> skipped, int forkHeld) {
    }

    private final SandboxLayout layout;
    private final SandboxRegistry registry;
    private final Consumer<String> log;

    Adoptions(SandboxLayout layout, SandboxRegistry registry, Consumer<String> log) {
        this.layout = layout;
        this.registry = registry;
        this.log = log;
    }

    Result adopt(String forkIdOrPrefix, String intoIdOrPrefix, boolean dryRun) {
        Sandbox fork = registry.get(forkIdOrPrefix);
        Sandbox into = registry.get(intoIdOrPrefix == null || intoIdOrPrefix.isEmpty() ? parentOf(fork)
                : intoIdOrPrefix);
        if (into == fork) {
            throw new KosaException(KosaException.Kind.USAGE, "a sandbox cannot adopt its own changes",
                    "name the sandbox to write them into with --into ID");
        }
        Sandbox first = fork.id().compareTo(into.id()) < 0 ? fork : into;
        Sandbox second = first == fork ? into : fork;
        return first.locked(() -> second.locked(() -> fork.withFolder(f -> into.withFolder(t ->
                adoptLocked(fork, into, dryRun)))));
    }

    private Result adoptLocked(Sandbox fork, Sandbox into, boolean dryRun) {
        Path from = folder(fork);
        Path to = folder(into);
        return SandboxHeld.paused(fork.workspace(), () -> SandboxHeld.paused(into.workspace(), () -> {
            List<FolderEdit> theirs = fork.undo().editsSinceStart(from);
            List<FolderEdit> target = fork.undo().editsSinceStart(to);
            AdoptPlan plan = AdoptPlan.of(theirs, target);
            List<String> skipped = new ArrayList<>(plan.skipped());
            FolderAdopter.Outcome done = withHeld(into, h -> FolderAdopter.apply(from, to, plan.steps(), h, dryRun));
            skipped.addAll(done.skipped());
            Result r = new Result(fork.id(), into.id(), into.record().workspace(), dryRun, done.applied(), done.held(),
                    plan.conflicts(), plan.already(), skipped, forkHeld(fork));
            if (!dryRun) {
                log.accept("sandbox " + into.id() + ": adopted " + r.applied().size() + " change(s) of fork "
                        + fork.id() + "; " + r.held().size() + " held unit(s) changed, " + r.conflicts().size()
                        + " conflict(s) left, " + r.skipped().size() + " skipped");
            }
            return r;
        }));
    }

    private String parentOf(Sandbox fork) {
        Path f = layout.forkedFrom(fork.id());
        try {
            if (Files.exists(f)) {
                return Files.readString(f).strip().split(" ")[0];
            }
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot read " + f + ": " + e.getMessage(),
                    "name the sandbox to adopt into with --into ID", e);
        }
        throw new KosaException(KosaException.Kind.USAGE, "sandbox " + fork.id() + " was not made by `kosa8 fork` "
                + "(or by a kosa8 that did not record its parent)", "name the sandbox to adopt into with --into ID");
    }

    private static Path folder(Sandbox s) {
        String w = s.record().workspace();
        if (w.isEmpty()) {
            throw new KosaException(KosaException.Kind.USAGE, "sandbox " + s.id() + " shares no folder",
                    "adopt works between sandboxes made with --workspace DIR");
        }
        return s.folder();
    }

    private interface WithHeld<T> {
        T apply(HeldChanges held);
    }

    /** The target's held layer: its server's while it runs, else opened from disk for the call. */
    private <T> T withHeld(Sandbox s, WithHeld<T> body) {
        WorkspaceServer server = s.workspace();
        if (server != null) {
            return body.apply(server.held());
        }
        try (HeldChanges h = HeldLayers.open(layout, s.id(), log)) {
            return body.apply(h);
        }
    }

    /** How many held units the fork has of its own: not adopted (they never reached its folder). */
    private int forkHeld(Sandbox fork) {
        WorkspaceServer server = fork.workspace();
        if (server != null && server.held() != null) {
            return server.held().units().size();
        }
        return new SandboxHeld(layout, registry, log).count(fork.id());
    }
}
