package dev.kosa8.daemon;

import dev.kosa8.host.KosaException;
import dev.kosa8.workspace.HeldChanges;
import dev.kosa8.workspace.WorkspaceServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Held changes, per sandbox: review, accept and reject ({@link HeldChanges}), for a sandbox that
 * runs (its folder's server paused meanwhile, so no request sees a unit half accepted), one that is
 * stopped, and one that is gone, whose held changes were kept at its removal until reviewed.
 */
final class SandboxHeld {
    /** A sandbox's held changes as a review shows them. */
    record Review(String id, String folder, List<HeldChanges.Entry> entries) {
    }

    /** What an accept or a reject did, and how many units are still held. */
    record Done(String id, HeldChanges.Outcome outcome, int left) {
    }

    private static final Duration PAUSE = Duration.ofSeconds(10);

    private final SandboxLayout layout;
    private final SandboxRegistry registry;
    private final Consumer<String> log;

    SandboxHeld(SandboxLayout layout, SandboxRegistry registry, Consumer<String> log) {
        this.layout = layout;
        this.registry = registry;
        this.log = log;
    }

    Review review(String idOrPrefix, boolean diff) {
        return with(idOrPrefix, (id, folder, shown, h) -> new Review(id, shown, h.review(folder, diff)));
    }

    Done accept(String idOrPrefix, List<String> paths, boolean all) {
        return with(idOrPrefix, (id, folder, shown, h) -> {
            HeldChanges.Outcome o = h.accept(folder, paths, all);
            log.accept("sandbox " + id + ": accepted " + o.done() + (o.conflicts().isEmpty() ? ""
                    : ", conflicts left held " + o.conflicts()));
            return new Done(id, o, h.units().size());
        });
    }

    Done reject(String idOrPrefix, List<String> paths, boolean all) {
        return with(idOrPrefix, (id, folder, shown, h) -> {
            HeldChanges.Outcome o = h.reject(paths, all);
            log.accept("sandbox " + id + ": rejected " + o.done());
            return new Done(id, o, h.units().size());
        });
    }

    /**
     * How many units sandbox {@code id} (the exact id) holds, from the record on disk, whether the
     * sandbox is there or gone and its changes kept: what `run` says at its end. Reads no folder.
     */
    int countAnywhere(String id) {
        if (!dev.kosa8.daemon.SandboxIds.isValid(id)) {
            throw new KosaException(KosaException.Kind.USAGE, "no sandbox '" + id + "'", "");
        }
        for (Path dir : List.of(HeldLayers.dir(layout, id), HeldLayers.kept(layout, id))) {
            if (HeldChanges.anyHeld(dir)) {
                try (HeldChanges h = HeldChanges.open(dir, HeldLayers.userFile(), log)) {
                    return h.units().size();
                }
            }
        }
        return 0;
    }

    /** The number of units sandbox {@code id} holds, from its record on disk. */
    int count(String id) {
        Path dir = HeldLayers.dir(layout, id);
        if (!HeldChanges.anyHeld(dir)) {
            return 0;
        }
        try (HeldChanges h = HeldLayers.open(layout, id, log)) {
            return h.units().size();
        }
    }

    /**
     * At a sandbox's removal: its held changes are moved aside to be reviewed later (the removal
     * deletes its directory), or dropped with {@code discard}.
     *
     * @return how many units were kept
     */
    int keepOnRemove(String id, boolean discard) {
        Path dir = HeldLayers.dir(layout, id);
        if (discard || !HeldChanges.anyHeld(dir)) {
            return 0;
        }
        int n = count(id);
        try {
            Files.createDirectories(HeldLayers.keptRoot(layout));
            Files.move(dir, HeldLayers.kept(layout, id));
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot keep the held changes of sandbox " + id + ": "
                    + e.getMessage(), "review them with `kosa8 review " + id + "` first, or pass --discard-held", e);
        }
        log.accept("sandbox " + id + ": " + n + " held change(s) kept in " + HeldLayers.kept(layout, id));
        return n;
    }

    private <T> T with(String idOrPrefix, Body<T> body) {
        Sandbox s;
        try {
            s = registry.get(idOrPrefix);
        } catch (KosaException notFound) {
            return withKept(idOrPrefix, body, notFound);
        }
        return s.locked(() -> {
            WorkspaceServer server = s.workspace();
            if (server != null && server.held() != null) {
                return paused(server, () -> body.apply(s.id(), s.folder(), s.record().workspace(), server.held()));
            }
            if (s.record().workspace().isEmpty()) {
                throw new KosaException(KosaException.Kind.USAGE, "sandbox " + s.id() + " shares no folder: nothing"
                        + " is held", "");
            }
            try (HeldChanges h = HeldLayers.open(layout, s.id(), log)) {
                return s.withFolder(f -> body.apply(s.id(), f, s.record().workspace(), h));
            }
        });
    }

    private <T> T withKept(String idOrPrefix, Body<T> body, KosaException notFound) {
        Path root = HeldLayers.keptRoot(layout);
        List<Path> matches;
        try (Stream<Path> all = Files.isDirectory(root) ? Files.list(root) : Stream.empty()) {
            matches = all.filter(p -> p.getFileName().toString().startsWith(idOrPrefix)).toList();
        } catch (IOException e) {
            throw notFound;
        }
        if (idOrPrefix.isEmpty() || matches.size() != 1) {
            throw notFound;
        }
        Path dir = matches.getFirst();
        String id = dir.getFileName().toString();
        T result;
        boolean empty;
        try (HeldChanges h = HeldChanges.open(dir, HeldLayers.userFile(), log)) {
            String folder = folderOf(h, id);
            result = body.apply(id, Path.of(folder), folder, h);
            empty = h.units().isEmpty();
        }
        if (empty) {
            try (HeldChanges h = HeldChanges.open(dir, HeldLayers.userFile(), log)) {
                h.discard(); // the sandbox is gone and nothing is left to review
            }
        }
        return result;
    }

    /** Runs {@code action} with the server's requests held back (a null server: none to hold). */
    static <T> T paused(WorkspaceServer server, java.util.function.Supplier<T> action) {
        if (server == null) {
            return action.get();
        }
        try {
            if (!server.pause(PAUSE)) {
                throw new KosaException(KosaException.Kind.STATE, "the sandbox's folder stayed busy for " + PAUSE
                        .toSeconds() + " s", "try again");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KosaException(KosaException.Kind.STATE, "interrupted", "try again");
        }
        try {
            return action.get();
        } finally {
            server.resume();
        }
    }

    private static String folderOf(HeldChanges h, String id) {
        if (h.folder().isEmpty()) {
            throw new KosaException(KosaException.Kind.STATE, "the held changes of " + id + " do not say which folder"
                    + " they belong in", "look at them by hand in its held/tree directory");
        }
        return h.folder();
    }

    /** What runs on a sandbox's held changes: {@code folder} is the path to reach its folder by, {@code shown} its name. */
    @FunctionalInterface
    private interface Body<T> {
        T apply(String id, Path folder, String shown, HeldChanges h);
    }
}
