package dev.kosa8.daemon;

import dev.kosa8.host.KosaException;
import dev.kosa8.workspace.FolderView;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Where the daemon reads and writes a sandbox's folder: the host folder its
 * record names, or, for a fork whose folder is a copy-on-write view of its
 * checkpoint (docs/checkpoints.md, "What the copies share"), the view,
 * mounted on first use ({@link FolderView}) and let go with the machine.
 * A view fork's record names its parts' directory, {@code
 * <sandbox>/folder-view}, which holds the base it is a view of ({@code
 * base}), what it changed ({@code upper/}) and overlayfs's {@code work/}.
 */
final class SandboxFolder {
    /** The parts' directory, {@code <sandbox>/folder-view}: the record's folder when the sandbox's is a view. */
    private final Path viewParts;
    /** The view while mounted; guarded by this. */
    private FolderView view;

    SandboxFolder(Path viewParts) {
        this.viewParts = viewParts;
    }

    /** Whether {@code r}'s folder is a view. */
    boolean isView(SandboxRecord r) {
        return r.workspace().equals(viewParts.toString());
    }

    /** The base a view is a view of, from its {@code base} file. */
    Path base() throws IOException {
        return Path.of(Files.readString(viewParts.resolve("base")).strip());
    }

    /** Makes {@code r}'s folder a view of {@code base}: its parts and its {@code base} file. */
    void makeView(Path base) throws IOException {
        FolderView.prepare(viewParts);
        Files.writeString(viewParts.resolve("base"), base + "\n");
    }

    /**
     * The path to read and write {@code r}'s folder by: its own for a host folder, the view's (mounted now if it
     * is not) for a view; null for none.
     */
    synchronized Path access(SandboxRecord r) {
        if (r.workspace().isEmpty()) {
            return null;
        }
        if (!isView(r)) {
            return Path.of(r.workspace());
        }
        if (view == null || !view.alive()) {
            try {
                view = FolderView.mount(base(), viewParts, Duration.ofSeconds(20));
            } catch (IOException e) {
                throw new KosaException(KosaException.Kind.HOST, "cannot mount the folder of sandbox " + r.id()
                        + " (a copy-on-write view of " + viewParts + "): " + e.getMessage(),
                        "`kosa8 doctor` says whether this host can make views; the fork's changes are kept in "
                                + viewParts.resolve("upper"), e);
            }
        }
        return view.path();
    }

    /** Lets the view go, once nothing serves it (its folder server closed). Nothing to do for a host folder. */
    synchronized void release() {
        if (view != null) {
            view.close();
            view = null;
        }
    }
}
