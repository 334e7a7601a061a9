package dev.kosa8.daemon;

import dev.kosa8.host.KosaException;
import dev.kosa8.workspace.FolderView;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Pattern;

/**
 * Where the daemon reads and writes a sandbox's folder: the host folder its
 * record names, or, for a fork whose folder is a copy-on-write view of its
 * checkpoint (docs/checkpoints.md, "What the copies share"), the view,
 * mounted on first use ({@link FolderView}) and let go with the machine.
 * A view fork's record names its parts' directory, {@code
 * <data>/sandboxes/ID/folder-view}, which holds the base it is a view of
 * ({@code base}), what it changed ({@code upper/}) and overlayfs's {@code work/}.
 */
final class SandboxFolder {
    /** A base as {@link FolderBases} names one: {@code folder-bases/PARENT-CHECKPOINT/tree}. */
    private static final Pattern BASE = Pattern.compile("[0-9a-f]{12}-c[0-9A-Za-z-]{1,64}");
    /** The parts' directory, {@code <sandbox>/folder-view}: the record's folder when the sandbox's is a view. */
    private final Path viewParts;
    /** The view while mounted; guarded by this. */
    private FolderView view;

    SandboxFolder(Path viewParts) {
        this.viewParts = viewParts;
    }

    /**
     * Whether {@code r}'s folder is a view: its record names {@code sandboxes/ID/folder-view}, its own parts'
     * directory (by those names, not by the whole path: the data directory may be spelled otherwise by another
     * run of the daemon, and the folder must never then be taken for a host folder and served raw).
     */
    boolean isView(SandboxRecord r) {
        Path w = Path.of(r.workspace());
        int n = w.getNameCount();
        return n >= 3 && w.getName(n - 1).toString().equals("folder-view") && w.getName(n - 2).toString()
                .equals(r.id()) && w.getName(n - 3).toString().equals("sandboxes");
    }

    /** The base a view is a view of, from its {@code base} file, which must name one as {@link FolderBases} does. */
    Path base() throws IOException {
        Path b = Path.of(Files.readString(viewParts.resolve("base")).strip());
        int n = b.getNameCount();
        if (!b.isAbsolute() || !b.equals(b.normalize()) || n < 3 || !b.getName(n - 1).toString().equals("tree")
                || !BASE.matcher(b.getName(n - 2).toString()).matches()
                || !b.getName(n - 3).toString().equals("folder-bases")) {
            throw new IOException(viewParts.resolve("base") + " names no folder base: " + b);
        }
        return b;
    }

    /** Makes the parts of a view of {@code base}, with its {@code base} file. */
    void makeView(Path base) throws IOException {
        FolderView.prepare(viewParts);
        Files.writeString(viewParts.resolve("base"), base + "\n");
    }

    /** Gives the view's own layer the root mode and modification time of {@code base}: what the guest sees. */
    void takeRootOf(Path base) throws IOException {
        Path upper = viewParts.resolve("upper");
        Files.setPosixFilePermissions(upper, Files.getPosixFilePermissions(base, LinkOption.NOFOLLOW_LINKS));
        Files.setLastModifiedTime(upper, Files.getLastModifiedTime(base, LinkOption.NOFOLLOW_LINKS));
    }

    /**
     * The path to read and write {@code r}'s folder by: its own for a host folder, the view's (mounted now if it
     * is not) for a view; null for none.
     *
     * @param served whether a folder server holds the view open: a view whose helper ended under it is not mounted
     *               again (two mounts of one layer are undefined), the caller is told to stop and start instead
     */
    synchronized Path access(SandboxRecord r, boolean served) {
        if (r.workspace().isEmpty()) {
            return null;
        }
        if (!isView(r)) {
            return Path.of(r.workspace());
        }
        if (view != null && !view.alive() && served) {
            throw new KosaException(KosaException.Kind.HOST, "the view of sandbox " + r.id() + "'s folder ended "
                    + "while its folder server still uses it (its helper process was killed)",
                    "stop and start the sandbox (`kosa8 stop " + r.id() + "`, `kosa8 start " + r.id() + "`): "
                            + "nothing it changed is lost");
        }
        if (view == null || !view.alive()) {
            Path base = null;
            try {
                base = base();
                view = FolderView.mount(base, viewParts, Duration.ofSeconds(20));
            } catch (IOException e) {
                String of = base == null ? "" : " of " + base + (Files.isDirectory(base) ? "" : " (which is gone)");
                throw new KosaException(KosaException.Kind.HOST, "cannot mount the folder of sandbox " + r.id()
                        + ", a copy-on-write view" + of + ": " + e.getMessage(),
                        "`kosa8 doctor` says whether this host can mount views; what the fork changed is kept in "
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
