package dev.kosa8.workspace;

import dev.kosa8.protocol.LinuxAbi;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Opening, for {@link P9Operations}: Tlopen and Tlcreate, under its confinement rules (only regular
 * files and directories are ever opened, {@link #openChecked}), and the sandbox's bound on the host
 * descriptors its open fids hold ({@link #MAX_OPEN}).
 */
final class P9Opens {
    /**
     * Host descriptors one sandbox may hold open: each open fid is one, and
     * they come from the daemon's single table shared by every sandbox, so a
     * guest opening files without end must hit its own limit (EMFILE), not
     * the daemon's.
     */
    static final int MAX_OPEN = 4096;
    private final P9Operations ops;
    private final int umask;
    private final AtomicInteger openFiles = new AtomicInteger();

    P9Opens(P9Operations ops, int umask) {
        this.ops = ops;
        this.umask = umask;
    }

    P9Reply lopen(P9Request.Lopen o) throws ErrnoException {
        Fid f = ops.fid(o.fid());
        if (f.kind != Fid.Kind.FILE || f.isOpen()) {
            throw new ErrnoException(ErrnoException.EBADF, "lopen");
        }
        int flags = hostFlags(o.flags());
        if ((flags & 3) != LinuxFs.O_RDONLY || (flags & LinuxFs.O_TRUNC) != 0) {
            ops.roots().rootForChange(f.path(), f.isDirectory()); // a held file is written in the held layer only
        }
        reserveOpen();
        boolean kept = false;
        try {
            int fd = openChecked(f.path(), flags);
            LinuxFs.Stat st;
            try {
                st = FdCalls.stat(fd);
            } catch (ErrnoException e) {
                LinuxFs.close(fd);
                throw e;
            }
            f.inHeldLayer = inHeldLayer(f.path());
            if (!f.open(fd, o.flags())) {
                // a second Tlopen, or a Tclunk, of the same fid got there first
                LinuxFs.close(fd);
                throw new ErrnoException(ErrnoException.EBADF, "lopen");
            }
            kept = true;
            return new P9Reply.Lopen(ops.qid(st), 0);
        } finally {
            if (!kept) {
                openFiles.decrementAndGet();
            }
        }
    }

    /**
     * Opens an existing regular file or directory of the folder, never anything else: the path is
     * resolved to an O_PATH descriptor, its type checked there, and only then is that very inode
     * opened with {@code flags} ({@link LinuxFs#reopen}), so a device node or FIFO is never
     * opened, not even briefly, and a swap between the check and the open cannot win. A symlink
     * is ELOOP, as openat2 would answer.
     */
    int openChecked(String path, int flags) throws ErrnoException {
        int pathFd = ops.pathFd(path);
        try {
            LinuxFs.Stat st = FdCalls.stat(pathFd);
            if (st.isSymlink()) {
                throw new ErrnoException(ErrnoException.ELOOP, "open of a symlink");
            }
            if (!st.isRegular() && !st.isDir()) {
                throw new ErrnoException(ErrnoException.EPERM, "only regular files and directories are opened");
            }
            return LinuxFs.reopen(pathFd, flags | LinuxFs.O_NONBLOCK | LinuxFs.O_NOCTTY);
        } finally {
            LinuxFs.close(pathFd);
        }
    }

    /**
     * The guest's open flags (9P's wire encoding) as the host's ({@link LinuxAbi#fromDotl}: four bits sit elsewhere
     * on arm64), minus what must not reach the host (O_NOATIME, O_DIRECT, async I/O).
     */
    static int hostFlags(int dotl) {
        return hostFlags(LinuxFs.ABI, dotl);
    }

    /** As {@link #hostFlags(int)}, for a host of {@code abi}'s architecture. */
    static int hostFlags(LinuxAbi abi, int dotl) {
        int keep = LinuxAbi.O_WRONLY | LinuxAbi.O_RDWR | LinuxAbi.O_CREAT | LinuxAbi.O_EXCL | LinuxAbi.O_TRUNC
                | LinuxAbi.O_APPEND | LinuxAbi.O_DSYNC | LinuxAbi.O_SYNC | abi.oDirectory();
        int accmode = dotl & 3;
        if (accmode == 3) {
            accmode = LinuxAbi.O_RDONLY;
        }
        return (abi.fromDotl(dotl) & keep & ~3) | accmode;
    }

    P9Reply lcreate(P9Request.Lcreate c) throws ErrnoException {
        Fid dir = ops.directory(c.fid());
        if (dir.isOpen()) {
            throw new ErrnoException(ErrnoException.EBADF, "lcreate on an open fid");
        }
        String path = Fid.child(dir.path(), Names.component(c.name()));
        int mode = P9Operations.safeMode(c.mode(), false);
        int flags = hostFlags(c.flags()) & ~LinuxFs.O_DIRECTORY;
        reserveOpen();
        try {
            return create(c, dir, path, mode, flags);
        } catch (ErrnoException | RuntimeException e) {
            openFiles.decrementAndGet();
            throw e;
        }
    }

    /** Tlcreate once a descriptor is reserved: the new fid keeps it, or {@link #forget} gives it back. */
    private P9Reply create(P9Request.Lcreate c, Fid dir, String path, int mode, int flags) throws ErrnoException {
        int fd;
        boolean created = true;
        try {
            // a file made here is a new regular file; an existing name is opened as Tlopen would
            fd = LinuxFs.openBeneath(ops.roots().rootForNew(path, false), path, flags | LinuxFs.O_CREAT | LinuxFs.O_EXCL
                    | LinuxFs.O_NOFOLLOW | LinuxFs.O_NONBLOCK | LinuxFs.O_NOCTTY, mode);
        } catch (ErrnoException e) {
            // an existing name is opened, also when the held layer has no room for a new one: only a name in a unit
            // it holds already (the fallback opens where the path resolves, and a unit the layer had no room to
            // hold still resolves in the folder, whose file the guest must not write)
            HeldChanges held = ops.roots().held();
            boolean exists = e.errno == ErrnoException.EEXIST || e.errno == ErrnoException.ENOSPC && held != null
                    && held.unitOf(path) != null && TreeCopy.statOrNull(held.treeFd(), path) != null;
            if (!exists || (flags & LinuxFs.O_EXCL) != 0) {
                throw e;
            }
            fd = openChecked(path, flags);
            created = false;
        }
        LinuxFs.Stat st;
        try {
            if (created) {
                keepMode(fd, mode);
            }
            st = FdCalls.stat(fd);
        } catch (ErrnoException e) {
            LinuxFs.close(fd);
            throw e;
        }
        Fid made = new Fid(path, Fid.Kind.FILE, Qid.QTFILE);
        made.inHeldLayer = inHeldLayer(path);
        made.open(fd, c.flags());
        if (!ops.fids().replace(c.fid(), dir, made)) {
            made.drop(); // closes fd; the caller gives the reservation back
            throw new ErrnoException(ErrnoException.EBADF, "lcreate: fid clunked meanwhile");
        }
        forget(dir);
        return new P9Reply.Lcreate(ops.qid(st), 0);
    }

    /** The daemon's umask would narrow the mode the guest asked for; put it back. */
    private void keepMode(int fd, int mode) throws ErrnoException {
        if ((mode & umask) != 0) {
            FdCalls.chmodFd(fd, mode);
        }
    }

    /** Opens a restored fid again by its path, as the snapshot's guest had it open (never truncating). */
    void reopen(Fid f, int openFlags) throws ErrnoException {
        reserveOpen();
        try {
            f.inHeldLayer = inHeldLayer(f.path());
            f.open(openChecked(f.path(), hostFlags(openFlags) & ~LinuxFs.O_TRUNC), openFlags);
        } catch (ErrnoException e) {
            openFiles.decrementAndGet();
            throw e;
        }
    }

    /** Whether {@code path} is opened in the held layer's tree (a unit it holds). */
    private boolean inHeldLayer(String path) {
        HeldChanges held = ops.roots().held();
        return held != null && held.unitOf(path) != null;
    }

    /** Counts one more open descriptor of this sandbox, or EMFILE at {@link #MAX_OPEN}. */
    private void reserveOpen() throws ErrnoException {
        if (openFiles.incrementAndGet() > MAX_OPEN) {
            openFiles.decrementAndGet();
            throw new ErrnoException(ErrnoException.EMFILE, "this sandbox has " + MAX_OPEN + " files open");
        }
    }

    /** Drops a fid, giving back its descriptor's place in {@link #MAX_OPEN}. */
    void forget(Fid f) {
        if (f.drop()) {
            openFiles.decrementAndGet();
        }
    }
}
