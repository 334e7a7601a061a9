package dev.kosa8.workspace;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A copy-on-write view of a folder: the kernel's overlayfs, with a read-only
 * {@code base} below and the view's own {@code upper} layer above, so a
 * file is copied only when it is first written (docs/checkpoints.md, "What
 * the copies share"). N views of one base cost the base once and each
 * view what it changed, on every file system that has user extended
 * attributes (ext4, XFS, Btrfs, tmpfs from Linux 6.6).
 *
 * <p>The view is mounted without privilege: a helper process ({@code
 * unshare --user --map-root-user --mount}, util-linux) makes a user and a
 * mount namespace of its own, mounts the view there, says {@code ready}
 * and waits on its standard input. The daemon reaches the view through the
 * helper's root, {@code /proc/PID/root/...} ({@link #path}); no other
 * process of the host sees the mount. The helper ends when its input
 * closes ({@link #close}, or the daemon dying), and the kernel then
 * detaches the mount; descriptors still open in it (the folder server's)
 * keep working until closed. The mount point on the host is made mode 000,
 * so a path taken after the helper ended finds nothing rather than an empty
 * folder.
 *
 * <p>Overlayfs's limits, as a guest sees them: renaming a directory that
 * came from the base fails with EXDEV (the unprivileged mount can have no
 * {@code redirect_dir}), and {@code mv} and the like then copy it; a hard
 * link to a base file copies the file up first.
 *
 * <p>Its parts live in one directory: {@code upper/} (what the view
 * changed; a deletion is a 0/0 character device, overlayfs's whiteout),
 * {@code work/} (overlayfs's scratch) and {@code mnt/} (the mount point).
 */
public final class FolderView implements AutoCloseable {
    /** The helper's program: {@code $1} the view's directory, {@code $2} the base, relative to it. */
    private static final String HELPER = "cd \"$1\" && mount -t overlay kosa8-folder-view -o \"lowerdir=$2,"
            + "upperdir=upper,workdir=work,userxattr\" mnt && echo ready && read _";
    /** Views can be made here, once a probe found so; a failed probe is tried again after {@link #RETRY}. */
    private static volatile boolean available;
    private static volatile Optional<String> lastRefusal = Optional.empty();
    private static volatile long refusedAt;
    private static final long RETRY = java.util.concurrent.TimeUnit.MINUTES.toNanos(1);

    private final Process helper;
    private final Path mountPoint;

    private FolderView(Process helper, Path mountPoint) {
        this.helper = helper;
        this.mountPoint = mountPoint;
    }

    /** Makes the view's parts in {@code dir} (new or already made): {@code upper/}, {@code work/}, {@code mnt/}. */
    public static void prepare(Path dir) throws IOException {
        Files.createDirectories(dir.resolve("upper"));
        Files.createDirectories(dir.resolve("work"));
        Path mnt = Files.createDirectories(dir.resolve("mnt"));
        Files.setPosixFilePermissions(mnt, PosixFilePermissions.fromString("---------"));
    }

    /**
     * Mounts the view of {@code base} whose parts are in {@code dir} ({@link #prepare}); an IOException says
     * why not (the helper's own words) within {@code timeout}.
     */
    public static FolderView mount(Path base, Path dir, Duration timeout) throws IOException {
        Path abs = dir.toAbsolutePath().normalize();
        String lower = abs.relativize(base.toAbsolutePath().normalize()).toString();
        if (lower.isEmpty() || lower.matches(".*[,:\\\\\\n\"].*")) {
            throw new IOException("the base " + base + " cannot be named in overlayfs's options from " + abs);
        }
        // the host's mount point, closed: once the helper is gone its path finds nothing, not an empty folder
        Files.setPosixFilePermissions(abs.resolve("mnt"), PosixFilePermissions.fromString("---------"));
        ProcessBuilder pb = new ProcessBuilder(List.of("unshare", "--user", "--map-root-user", "--mount",
                "--propagation", "private", "sh", "-c", HELPER, "kosa8-folder-view", abs.toString(), lower));
        pb.redirectErrorStream(true);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new IOException("cannot start unshare (util-linux): " + e.getMessage(), e);
        }
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> {
            try {
                BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                StringBuilder said = new StringBuilder();
                for (String line = r.readLine(); line != null; line = r.readLine()) {
                    if (line.equals("ready")) {
                        return "ready";
                    }
                    said.append(said.isEmpty() ? "" : "; ").append(line);
                }
                return said.toString();
            } catch (IOException e) {
                return e.getMessage();
            }
        }, Thread::startVirtualThread);
        String answer;
        try {
            answer = first.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            answer = "no answer within " + timeout.toSeconds() + " s";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            answer = "interrupted";
        } catch (ExecutionException e) {
            answer = String.valueOf(e.getCause());
        }
        if (!answer.equals("ready")) {
            p.descendants().forEach(ProcessHandle::destroyForcibly); // a mount that hangs, not only its shell
            p.destroyForcibly();
            throw new IOException("cannot mount the folder's view: " + (answer.isEmpty() ? "the helper exited "
                    + exitOf(p) : answer));
        }
        return new FolderView(p, abs.resolve("mnt"));
    }

    private static String exitOf(Process p) {
        try {
            return p.waitFor(2, TimeUnit.SECONDS) ? String.valueOf(p.exitValue()) : "(still running)";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "(interrupted)";
        }
    }

    /** The view, as this process reaches it; valid while {@link #alive}. */
    public Path path() {
        return Path.of("/proc/" + helper.pid() + "/root" + mountPoint);
    }

    /** Whether the helper, and so the mount, is still there. */
    public boolean alive() {
        return helper.isAlive();
    }

    /**
     * Lets the view go: the helper's input is closed, and it ends. Descriptors open in the view keep it until
     * they close; close them first, or a new view of the same parts may be mounted beside the old one.
     */
    @Override
    public void close() {
        try (OutputStream in = helper.getOutputStream()) {
            in.flush();
        } catch (IOException e) {
            // gone already
        }
        try {
            if (!helper.waitFor(5, TimeUnit.SECONDS)) {
                helper.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            helper.destroyForcibly();
        }
    }

    /**
     * Makes the parts in {@code dir} removable by the user, once no view of them is mounted: overlayfs leaves
     * {@code work/work} mode 000, and the mount point is too, which a walk as the user cannot enter. Nothing to
     * do when there are none.
     */
    public static void unlock(Path dir) throws IOException {
        Path inner = dir.resolve("work").resolve("work");
        if (Files.isDirectory(inner, LinkOption.NOFOLLOW_LINKS)) {
            Files.setPosixFilePermissions(inner, PosixFilePermissions.fromString("rwx------"));
        }
        Path mnt = dir.resolve("mnt");
        if (Files.isDirectory(mnt, LinkOption.NOFOLLOW_LINKS)) {
            Files.setPosixFilePermissions(mnt, PosixFilePermissions.fromString("rwx------"));
        }
    }

    /**
     * Why views cannot be made on this host, or empty when they can: a view of an empty base is mounted in a
     * scratch directory made in {@code scratchParent} (then removed). No unprivileged user namespaces (Ubuntu
     * 24.04's AppArmor restriction, a kernel with them off), no overlayfs, no util-linux. A success is kept for
     * the process; a refusal for a minute (a probe that timed out on a loaded machine is not the last word).
     */
    public static Optional<String> unavailable(Path scratchParent) {
        if (available) {
            return Optional.empty();
        }
        synchronized (FolderView.class) {
            if (available) {
                return Optional.empty();
            }
            if (lastRefusal.isPresent() && System.nanoTime() - refusedAt < RETRY) {
                return lastRefusal;
            }
            Optional<String> why = probe(scratchParent);
            available = why.isEmpty();
            lastRefusal = why;
            refusedAt = System.nanoTime();
            return why;
        }
    }

    private static Optional<String> probe(Path scratchParent) {
        Path dir = null;
        try {
            Files.createDirectories(scratchParent);
            dir = Files.createTempDirectory(scratchParent, "view-probe-");
            Files.createDirectories(dir.resolve("base"));
            Path parts = dir.resolve("view");
            prepare(parts);
            try (FolderView v = mount(dir.resolve("base"), parts, Duration.ofSeconds(10))) {
                Files.writeString(v.path().resolve("probe"), "x");
                if (!Files.exists(parts.resolve("upper").resolve("probe"))) {
                    return Optional.of("a file written in the view did not land in its own layer");
                }
            }
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.of(String.valueOf(e.getMessage()));
        } finally {
            if (dir != null) {
                try {
                    unlock(dir.resolve("view"));
                    dev.kosa8.host.FileTrees.delete(dir);
                } catch (IOException e) {
                    // a scratch directory left in kosa8's own data: harmless
                }
            }
        }
    }
}
