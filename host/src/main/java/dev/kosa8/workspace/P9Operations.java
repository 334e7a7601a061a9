package dev.kosa8.workspace;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The 9P2000.L operations on one folder: what each request does to the host
 * file system, and the fid table it works on. Transport, threads and framing
 * are {@link WorkspaceServer}'s.
 *
 * <p>Confinement: every path is resolved by {@link LinuxFs#openBeneath} from
 * the folder's root descriptor (the kernel refuses "..", absolute paths and
 * every symlink on the way), and every name the guest gives passes
 * {@link Names#component} before it reaches a *at() call on a directory that
 * was itself resolved that way. The *at() calls used never follow a final
 * symlink. Only regular files and directories are ever opened: the type is
 * checked on an O_PATH descriptor and then that same inode is opened
 * ({@link LinuxFs#reopen}), so a FIFO or device node put in the folder (or
 * swapped in during an open) is never opened, cannot block and triggers
 * nothing.
 *
 * <p>Ownership: the guest sees the files of the user who runs the daemon as
 * its root's (uid and gid 0), other owners' files as nobody (65534); chown
 * from the guest is accepted and changes nothing, so everything the guest
 * creates belongs to the host user, with the modes it asked for.
 *
 * <p>Where each request is served, the switch in {@link #serve} and
 * {@link #reply} says. Here: the session (Tversion, Tattach, Tstatfs,
 * Tclunk), walks and the fid table, and the primitives that apply the rules
 * above ({@link #pathFd}, {@link #dirFd}, {@link #safeMode}). The other
 * request families are package-private classes beside this one, under the
 * same rules and holding no root descriptor of their own: {@link P9Opens}
 * (Tlopen, Tlcreate, and the sandbox's bound on open descriptors),
 * {@link P9FileIo} (requests on an open fid's descriptor),
 * {@link P9Attributes} and {@link P9Names} (making, renaming and removing
 * names). Which root a path resolves beneath, the
 * folder's or the held layer's, {@link HeldRoots} says for all of them.
 */
final class P9Operations {
    static final String VERSION = "9P2000.L";
    static final int NOFID = -1;
    /**
     * Fids one sandbox may hold. Each holds its path (up to PATH_MAX), so this
     * also bounds the daemon heap a guest can claim: 64 Ki fids of 4 KiB
     * paths is 256 MiB at the very worst. The guest kernel holds a fid per
     * file in use, not per file it has seen (cache=mmap drops unused dentries).
     */
    static final int MAX_FIDS = 1 << 16;
    /**
     * The most one pwrite(2) of a Twrite's data writes. A large aligned write gets a page cache folio
     * as large (Linux 6.18's ext4: 1 MiB for 1 MiB), taken from the free lists' large blocks; on a host
     * that is itself a VM whose hypervisor takes free memory back (free page reporting: Firecracker's,
     * many cloud VMs'), such a block must then be faulted in again page by page, and the copy into it
     * crawls. Measured on the test machine, 1 GiB written in aligned pieces, memory left 3 s to settle
     * between runs: 1 MiB pieces 2.4-2.7 s, 512 KiB 1.5-1.9 s, 32 KiB 0.26-0.31 s; after touching and
     * freeing 6 GiB (so nothing was given back) 1 MiB pieces ran as fast. Pieces of 32 KiB get folios of
     * at most 8 pages, served from the per-CPU lists of recently freed, still backed pages. The cost
     * where memory is not given back is 31 more system calls per MiB: about 0.06 s more per GiB here
     * (1 MiB pieces 0.20-0.21 s, 64 KiB 0.22-0.24 s, 32 KiB 0.26-0.31 s).
     */
    static final int WRITE_PIECE = 32 * 1024;

    /** The smallest msize the server accepts in Tversion. */
    static final int MIN_MSIZE = 4096;

    static final int NOBODY = 65534;
    static final long GETATTR_BASIC_AND_BTIME = 0x7ffL | 0x800L;
    static final int AT_REMOVEDIR = 0x200;

    private final int rootFd;
    private final int umask;
    private final Consumer<String> log;
    private final Map<Integer, Fid> fids = new ConcurrentHashMap<>();
    /** Fids clunked quietly, out of the table, whose descriptors are still to be closed ({@link #release}). */
    private final java.util.Set<Fid> unlisted = ConcurrentHashMap.newKeySet();
    private final Map<Long, Integer> devices = new ConcurrentHashMap<>();
    private final AtomicInteger nextDevice = new AtomicInteger();
    private volatile int msize;
    private final P9FileIo io;
    private final P9Attributes attributes;
    /** The guest's own changes, noted once its folder is cached, so their echoes are not sent back to it. */
    private final GuestChanges guestChanges = new GuestChanges();
    private volatile boolean noting;
    private final P9Names names;
    private final P9Opens opens;
    /** The folder's root, or the held layer's tree for a path in a held unit. */
    private final HeldRoots roots;

    P9Operations(int rootFd, int ownerUid, int umask, int maxMsize, Consumer<String> log) {
        this(rootFd, ownerUid, umask, maxMsize, log, null);
    }

    P9Operations(int rootFd, int ownerUid, int umask, int maxMsize, Consumer<String> log, HeldChanges held) {
        this.rootFd = rootFd;
        this.roots = new HeldRoots(rootFd, held);
        this.umask = umask;
        this.msize = maxMsize;
        this.log = log;
        this.io = new P9FileIo(this);
        this.attributes = new P9Attributes(this, ownerUid);
        this.names = new P9Names(this);
        this.opens = new P9Opens(this, umask);
    }

    /** Which root a path resolves beneath: the folder, or the held layer ({@link HeldRoots}). */
    HeldRoots roots() {
        return roots;
    }

    int msize() {
        return msize;
    }

    Map<Integer, Fid> fids() {
        return fids;
    }

    /** Carries out one request and writes its reply frame (or an Rlerror) at {@code out}'s position. */
    void serve(int tag, P9Request request, ByteBuffer out) {
        int start = out.position();
        List<String> changed = noting ? GuestChanges.changedBy(request, this::pathOf) : List.of();
        Fid written = noting && request instanceof P9Request.Write w ? fids.get(w.fid()) : null;
        try {
            switch (request) {
                case P9Request.Read r -> io.read(tag, r, out);
                case P9Request.Readdir r -> io.readdir(tag, r, out);
                default -> P9Codec.encodeReply(tag, reply(request), out);
            }
            for (String path : changed) {
                noteGuestChange(path);
            }
            if (written != null) {
                LinuxFs.Stat st = written.withFdIfOpen(FdCalls::stat);
                if (st != null) {
                    guestChanges.note(qid(st).path(), st);
                }
            }
        } catch (ErrnoException e) {
            out.position(start);
            P9Codec.encodeReply(tag, new P9Reply.Lerror(e.errno), out);
        }
    }

    private P9Reply reply(P9Request request) throws ErrnoException {
        return switch (request) {
            case P9Request.Version v -> version(v);
            case P9Request.Auth a -> throw new ErrnoException(ErrnoException.EOPNOTSUPP, "auth");
            case P9Request.Attach a -> attach(a);
            case P9Request.Flush f -> new P9Reply.Flush();
            case P9Request.Walk w -> walk(w);
            case P9Request.Lopen o -> opens.lopen(o);
            case P9Request.Lcreate c -> opens.lcreate(c);
            case P9Request.Read r -> throw new IllegalStateException("served directly");
            case P9Request.Readdir r -> throw new IllegalStateException("served directly");
            case P9Request.Write w -> io.write(w);
            case P9Request.Clunk c -> clunk(c.fid());
            case P9Request.Remove r -> names.remove(r);
            case P9Request.Statfs s -> statfs();
            case P9Request.Symlink s -> names.symlink(s);
            case P9Request.Mknod m -> names.mknod(m);
            case P9Request.Rename r -> names.rename(r);
            case P9Request.Readlink r -> new P9Reply.Readlink(attributes.readlink(fid(r.fid())));
            case P9Request.Getattr g -> attributes.getattr(fid(g.fid()));
            case P9Request.Setattr s -> attributes.setattr(s);
            case P9Request.XattrWalk x -> attributes.xattrWalk(x);
            case P9Request.XattrCreate x -> throw new ErrnoException(ErrnoException.EOPNOTSUPP, "xattrcreate");
            case P9Request.Fsync f -> io.fsync(f);
            case P9Request.Lock l -> io.lock(l);
            case P9Request.GetLock g -> io.getLock(g);
            case P9Request.Link l -> names.link(l);
            case P9Request.Mkdir m -> names.mkdir(m);
            case P9Request.RenameAt r -> names.renameAt(r);
            case P9Request.UnlinkAt u -> names.unlinkAt(u);
        };
    }

    // --- session ---

    private P9Reply version(P9Request.Version v) {
        clunkAll();
        if (!v.version().equals(VERSION)) {
            return new P9Reply.Version(msize, "unknown");
        }
        if (v.msize() < MIN_MSIZE) {
            // the server may only lower the client's msize, and less than this cannot carry a Rgetattr and a name
            return new P9Reply.Version(msize, "unknown");
        }
        msize = Math.min(msize, v.msize());
        return new P9Reply.Version(msize, VERSION);
    }

    private P9Reply attach(P9Request.Attach a) throws ErrnoException {
        LinuxFs.Stat st = FdCalls.stat(rootFd);
        addFid(a.fid(), new Fid("", Fid.Kind.FILE, qid(st).type()));
        return new P9Reply.Attach(qid(st));
    }

    private P9Reply statfs() throws ErrnoException {
        LinuxFs.StatFs s = FdCalls.statfs(rootFd);
        return new P9Reply.Statfs(0x01021997, (int) s.bsize(), s.blocks(), s.bfree(), s.bavail(), s.files(),
                s.ffree(), s.fsid(), (int) s.namelen());
    }

    void clunkAll() {
        for (Integer id : List.copyOf(fids.keySet())) {
            try {
                clunk(id);
            } catch (ErrnoException ignored) {
                // already gone
            }
        }
        for (Fid f : List.copyOf(unlisted)) {
            release(f); // a quiet clunk whose release a closing server's workers will not run
        }
    }

    private P9Reply clunk(int id) throws ErrnoException {
        Fid f = unlist(id);
        if (f == null) {
            throw new ErrnoException(ErrnoException.EBADF, "clunk");
        }
        release(f);
        return new P9Reply.Clunk();
    }

    /**
     * A quiet clunk's first half ({@link QuietClunks}): takes fid {@code id} out of the table, so the
     * next request may use its number, and returns it for {@link #release} (null if there was none).
     */
    Fid unlist(int id) {
        Fid f = fids.remove(id);
        if (f != null) {
            unlisted.add(f);
        }
        return f;
    }

    /** A quiet clunk's second half: closes the fid's descriptor once no request uses it. */
    void release(Fid f) {
        forget(f);
        unlisted.remove(f);
    }

    // --- walks and the fid table ---

    private P9Reply walk(P9Request.Walk w) throws ErrnoException {
        Fid from = fid(w.fid());
        if (from.kind != Fid.Kind.FILE) {
            throw new ErrnoException(ErrnoException.EBADF, "walk");
        }
        if (w.newFid() != w.fid() && inUse(w.newFid())) {
            throw new ErrnoException(ErrnoException.EBADF, "walk: newfid in use");
        }
        String path = from.path();
        byte type = from.qidType;
        List<Qid> qids = new ArrayList<>(w.names().size());
        for (String name : w.names()) {
            String next;
            if (name.equals("..")) {
                next = Fid.parent(path); // never above the root: the parent of "" is ""
            } else if (name.equals(".")) {
                next = path;
            } else {
                try {
                    next = Fid.child(path, Names.component(name));
                } catch (ErrnoException e) {
                    if (qids.isEmpty()) {
                        throw e;
                    }
                    break;
                }
            }
            LinuxFs.Stat st;
            try {
                st = statPath(next);
            } catch (ErrnoException e) {
                if (qids.isEmpty()) {
                    throw e;
                }
                break;
            }
            Qid q = qid(st);
            qids.add(q);
            path = next;
            type = q.type();
        }
        if (qids.size() == w.names().size()) {
            Fid made = new Fid(path, Fid.Kind.FILE, type);
            if (w.newFid() == w.fid()) {
                if (!fids.replace(w.fid(), from, made)) {
                    throw new ErrnoException(ErrnoException.EBADF, "walk: fid clunked meanwhile");
                }
                forget(from);
            } else {
                addFid(w.newFid(), made);
            }
        }
        return new P9Reply.Walk(qids);
    }

    /** From now on the guest's own changes are noted ({@link GuestChanges}): its folder is cached. */
    void startNoting() {
        noting = true;
    }

    /** Whether {@code now} is a file just as the guest's own last change left it ({@link GuestChanges}). */
    boolean isGuestsOwn(P9Reply.Getattr now) {
        return guestChanges.isGuestsOwn(now);
    }

    private String pathOf(int fid) {
        Fid f = fids.get(fid);
        return f == null ? null : f.path();
    }

    private void noteGuestChange(String path) {
        try {
            LinuxFs.Stat st = statPath(path);
            guestChanges.note(qid(st).path(), st);
        } catch (ErrnoException e) {
            // gone again already: its echo, if any, is sent
        }
    }

    /**
     * What a Tgetattr of the file at {@code path} answers now, or null where there is none (or it
     * cannot be looked at): what the guest's cache is told of a name the host changed.
     */
    P9Reply.Getattr attributesOf(String path) {
        try {
            return attributes.getattr(path);
        } catch (ErrnoException e) {
            return null;
        }
    }

    /**
     * A read-only open the guest was answered before it was made, as a Tlopenq asks: what Tlopen does, its
     * error, if any, kept by the fid for its next use ({@link Fid#openError}).
     */
    void openQuietly(int fid, int flags) throws ErrnoException {
        Fid f = fid(fid);
        int host = P9Opens.hostFlags(flags);
        if ((host & 3) != LinuxFs.O_RDONLY || (host & LinuxFs.O_TRUNC) != 0) {
            // only a read-only open is answered before it is made: one that changes anything is ordered (Tlopen)
            f.openError = ErrnoException.EINVAL;
            throw new ErrnoException(ErrnoException.EINVAL, "a Tlopenq that writes or truncates");
        }
        try {
            opens.lopen(new P9Request.Lopen(fid, flags));
        } catch (ErrnoException e) {
            if (!f.isOpen()) {
                f.openError = e.errno;
            }
            throw e;
        }
    }

    /** A clone walk ({@code newFid} the same file as {@code fid}), as a Twalkq asks: no system call. */
    void cloneFid(int fid, int newFid) throws ErrnoException {
        if (fid == newFid) {
            throw new ErrnoException(ErrnoException.EINVAL, "clone of a fid onto itself");
        }
        walk(new P9Request.Walk(fid, newFid, List.of()));
    }

    void addFid(int id, Fid f) throws ErrnoException {
        if (id == NOFID) {
            throw new ErrnoException(ErrnoException.EBADF, "fid");
        }
        if (fids.size() >= MAX_FIDS) {
            throw new ErrnoException(ErrnoException.EMFILE, "too many fids");
        }
        Fid old = fids.putIfAbsent(id, f);
        if (old != null && !(old.restored && fids.replace(id, old, f))) {
            throw new ErrnoException(ErrnoException.EBADF, "fid in use");
        }
        if (old != null) {
            forget(old); // clunked quietly just before a checkpoint: see QuietClunks
        }
    }

    /**
     * Whether fid {@code id} is one the guest holds. A fid restored from a snapshot that the guest names
     * as a new fid is not: its quiet clunk was on its way at the checkpoint ({@link QuietClunks}).
     */
    private boolean inUse(int id) {
        Fid f = fids.get(id);
        return f != null && !f.restored;
    }

    Fid fid(int id) throws ErrnoException {
        Fid f = fids.get(id);
        if (f == null) {
            throw new ErrnoException(ErrnoException.EBADF, "fid");
        }
        if (f.stale) {
            throw new ErrnoException(ErrnoException.ESTALE, "fid of a file gone since the checkpoint");
        }
        return f;
    }

    Fid directory(int id) throws ErrnoException {
        Fid f = fid(id);
        if (f.kind != Fid.Kind.FILE || !f.isDirectory()) {
            throw new ErrnoException(ErrnoException.ENOTDIR, "not a directory");
        }
        return f;
    }

    // --- resolving paths beneath the root: the confinement rules above, for every request family ---

    /** An O_PATH descriptor of the path itself (a trailing symlink is not followed). */
    int pathFd(String path) throws ErrnoException {
        return LinuxFs.openBeneath(roots.rootFor(path), path.isEmpty() ? "." : path,
                LinuxFs.O_PATH | LinuxFs.O_NOFOLLOW, 0);
    }

    /** An O_PATH descriptor of a directory of the folder. */
    int dirFd(String path) throws ErrnoException {
        return LinuxFs.openBeneath(roots.rootFor(path), path.isEmpty() ? "." : path,
                LinuxFs.O_PATH | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW, 0);
    }

    /**
     * An O_PATH descriptor of the directory that {@code child} is to be made, changed or removed
     * in, in the layer the change belongs to ({@link HeldRoots#rootForChange}).
     */
    int parentFd(String child, boolean directory) throws ErrnoException {
        int root = roots.rootForChange(child, directory);
        String parent = Fid.parent(child);
        return LinuxFs.openBeneath(root, parent.isEmpty() ? "." : parent,
                LinuxFs.O_PATH | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW, 0);
    }

    /** As {@link #parentFd}, for removing {@code child}: never refused for the held layer's room. */
    int parentFdForRemoval(String child, boolean directory) throws ErrnoException {
        int root = roots.rootForRemoval(child, directory);
        String parent = Fid.parent(child);
        return LinuxFs.openBeneath(root, parent.isEmpty() ? "." : parent,
                LinuxFs.O_PATH | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW, 0);
    }

    /** As {@link #parentFd}, for a new entry {@code child}: counted against the held layer's bound there. */
    int parentFdForNew(String child, boolean directory) throws ErrnoException {
        roots.rootForNew(child, directory);
        return parentFd(child, directory);
    }

    LinuxFs.Stat statPath(String path) throws ErrnoException {
        int fd = pathFd(path);
        try {
            return FdCalls.stat(fd);
        } finally {
            LinuxFs.close(fd);
        }
    }

    Qid qid(LinuxFs.Stat st) {
        byte type = st.isDir() ? Qid.QTDIR : st.isSymlink() ? Qid.QTSYMLINK : Qid.QTFILE;
        long dev = (st.devMajor() << 32) | st.devMinor();
        int index = devices.computeIfAbsent(dev, d -> nextDevice.getAndIncrement());
        // the folder may hold other mounts: keep inode numbers of different devices apart
        long path = index == 0 ? st.ino() : st.ino() ^ ((long) index << 56);
        return new Qid(type, 0, path);
    }

    /** Replaces every fid with those of a snapshot, reopening open ones by path (see {@link WorkspaceSnapshot}). */
    void restore(WorkspaceSnapshot snapshot) {
        clunkAll();
        msize = Math.min(msize, snapshot.msize());
        for (WorkspaceSnapshot.FidState s : snapshot.fids()) {
            Fid f = new Fid(s.path(), s.xattr() ? Fid.Kind.XATTR : Fid.Kind.FILE, s.qidType());
            f.restored = true;
            if (s.openFlags() >= 0 && !s.xattr()) {
                f.openFlags = s.openFlags();
                try {
                    opens.reopen(f, s.openFlags());
                } catch (ErrnoException e) {
                    f.stale = true;
                    log.accept("fid " + s.fid() + " (" + s.path() + ") cannot be reopened: " + e.getMessage());
                }
            }
            fids.put(s.fid(), f);
        }
    }

    /** Drops a fid, giving back its descriptor's place in {@link P9Opens#MAX_OPEN}. */
    void forget(Fid f) {
        opens.forget(f);
    }

    /**
     * The permission bits the guest may set on the host: no set-user-id bit,
     * and set-group-id only on directories (where it means "inherit the
     * group"). The daemon runs as the user, so a setuid file would be the
     * user's own; were it ever run as root, it would be root's.
     */
    static int safeMode(int mode, boolean directory) {
        int m = mode & 07777 & ~04000;
        return directory ? m : m & ~02000;
    }

    void log(String m) {
        log.accept(m);
    }
}
