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
     * Host descriptors one sandbox may hold open: each open fid is one, and
     * they come from the daemon's single table shared by every sandbox, so a
     * guest opening files without end must hit its own limit (EMFILE), not
     * the daemon's.
     */
    static final int MAX_OPEN = 4096;
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

    /** Raw dirents of one Treaddir, per worker thread: a reply is at most msize, so is what is read for one. */
    private static final ThreadLocal<ByteBuffer> DIRENTS =
            ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(WorkspaceServer.MSIZE));
    private final java.util.concurrent.atomic.AtomicInteger openFiles = new java.util.concurrent.atomic.AtomicInteger();
    static final int NOBODY = 65534;
    static final long GETATTR_BASIC_AND_BTIME = 0x7ffL | 0x800L;
    static final int AT_REMOVEDIR = 0x200;

    private final int rootFd;
    private final int ownerUid;
    private final int umask;
    private final Consumer<String> log;
    private final Map<Integer, Fid> fids = new ConcurrentHashMap<>();
    /** Fids clunked quietly, out of the table, whose descriptors are still to be closed ({@link #release}). */
    private final java.util.Set<Fid> unlisted = ConcurrentHashMap.newKeySet();
    private final Map<Long, Integer> devices = new ConcurrentHashMap<>();
    private final AtomicInteger nextDevice = new AtomicInteger();
    private volatile int msize;

    P9Operations(int rootFd, int ownerUid, int umask, int maxMsize, Consumer<String> log) {
        this.rootFd = rootFd;
        this.ownerUid = ownerUid;
        this.umask = umask;
        this.msize = maxMsize;
        this.log = log;
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
        try {
            switch (request) {
                case P9Request.Read r -> read(tag, r, out);
                case P9Request.Readdir r -> readdir(tag, r, out);
                default -> P9Codec.encodeReply(tag, reply(request), out);
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
            case P9Request.Lopen o -> lopen(o);
            case P9Request.Lcreate c -> lcreate(c);
            case P9Request.Read r -> throw new IllegalStateException("served directly");
            case P9Request.Readdir r -> throw new IllegalStateException("served directly");
            case P9Request.Write w -> write(w);
            case P9Request.Clunk c -> clunk(c.fid());
            case P9Request.Remove r -> remove(r);
            case P9Request.Statfs s -> statfs();
            case P9Request.Symlink s -> symlink(s);
            case P9Request.Mknod m -> mknod(m);
            case P9Request.Rename r -> rename(r);
            case P9Request.Readlink r -> new P9Reply.Readlink(readlink(fid(r.fid())));
            case P9Request.Getattr g -> getattr(fid(g.fid()));
            case P9Request.Setattr s -> setattr(s);
            case P9Request.XattrWalk x -> xattrWalk(x);
            case P9Request.XattrCreate x -> throw new ErrnoException(ErrnoException.EOPNOTSUPP, "xattrcreate");
            case P9Request.Fsync f -> fsync(f);
            case P9Request.Lock l -> lock(l);
            case P9Request.GetLock g -> getLock(g);
            case P9Request.Link l -> link(l);
            case P9Request.Mkdir m -> mkdir(m);
            case P9Request.RenameAt r -> renameAt(r);
            case P9Request.UnlinkAt u -> unlinkAt(u);
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
        LinuxFs.Stat st = LinuxFs.stat(rootFd);
        addFid(a.fid(), new Fid("", Fid.Kind.FILE, qid(st).type()));
        return new P9Reply.Attach(qid(st));
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

    // --- names ---

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

    private void addFid(int id, Fid f) throws ErrnoException {
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

    private Fid directory(int id) throws ErrnoException {
        Fid f = fid(id);
        if (f.kind != Fid.Kind.FILE || !f.isDirectory()) {
            throw new ErrnoException(ErrnoException.ENOTDIR, "not a directory");
        }
        return f;
    }

    /** An O_PATH descriptor of the path itself (a trailing symlink is not followed). */
    private int pathFd(String path) throws ErrnoException {
        return LinuxFs.openBeneath(rootFd, path.isEmpty() ? "." : path, LinuxFs.O_PATH | LinuxFs.O_NOFOLLOW, 0);
    }

    /** An O_PATH descriptor of a directory of the folder. */
    private int dirFd(String path) throws ErrnoException {
        return LinuxFs.openBeneath(rootFd, path.isEmpty() ? "." : path,
                LinuxFs.O_PATH | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW, 0);
    }

    private LinuxFs.Stat statPath(String path) throws ErrnoException {
        int fd = pathFd(path);
        try {
            return LinuxFs.stat(fd);
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

    // --- open, read, write ---

    private P9Reply lopen(P9Request.Lopen o) throws ErrnoException {
        Fid f = fid(o.fid());
        if (f.kind != Fid.Kind.FILE || f.isOpen()) {
            throw new ErrnoException(ErrnoException.EBADF, "lopen");
        }
        reserveOpen();
        boolean kept = false;
        try {
            int fd = openChecked(f.path(), hostFlags(o.flags()));
            LinuxFs.Stat st;
            try {
                st = LinuxFs.stat(fd);
            } catch (ErrnoException e) {
                LinuxFs.close(fd);
                throw e;
            }
            if (!f.open(fd, o.flags())) {
                // a second Tlopen, or a Tclunk, of the same fid got there first
                LinuxFs.close(fd);
                throw new ErrnoException(ErrnoException.EBADF, "lopen");
            }
            kept = true;
            return new P9Reply.Lopen(qid(st), 0);
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
    private int openChecked(String path, int flags) throws ErrnoException {
        int pathFd = pathFd(path);
        try {
            LinuxFs.Stat st = LinuxFs.stat(pathFd);
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

    /** The guest's open flags, minus what must not reach the host (O_NOATIME, O_DIRECT, async I/O). */
    static int hostFlags(int dotl) {
        int keep = LinuxFs.O_WRONLY | LinuxFs.O_RDWR | LinuxFs.O_CREAT | LinuxFs.O_EXCL | LinuxFs.O_TRUNC
                | LinuxFs.O_APPEND | LinuxFs.O_DSYNC | LinuxFs.O_SYNC | LinuxFs.O_DIRECTORY;
        int accmode = dotl & 3;
        if (accmode == 3) {
            accmode = LinuxFs.O_RDONLY;
        }
        return (dotl & keep & ~3) | accmode;
    }

    private P9Reply lcreate(P9Request.Lcreate c) throws ErrnoException {
        Fid dir = directory(c.fid());
        if (dir.isOpen()) {
            throw new ErrnoException(ErrnoException.EBADF, "lcreate on an open fid");
        }
        String path = Fid.child(dir.path(), Names.component(c.name()));
        int mode = safeMode(c.mode(), false);
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
            fd = LinuxFs.openBeneath(rootFd, path, flags | LinuxFs.O_CREAT | LinuxFs.O_EXCL | LinuxFs.O_NOFOLLOW
                    | LinuxFs.O_NONBLOCK | LinuxFs.O_NOCTTY, mode);
        } catch (ErrnoException e) {
            if (e.errno != ErrnoException.EEXIST || (flags & LinuxFs.O_EXCL) != 0) {
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
            st = LinuxFs.stat(fd);
        } catch (ErrnoException e) {
            LinuxFs.close(fd);
            throw e;
        }
        Fid made = new Fid(path, Fid.Kind.FILE, Qid.QTFILE);
        made.open(fd, c.flags());
        if (!fids.replace(c.fid(), dir, made)) {
            made.drop(); // closes fd; the caller gives the reservation back
            throw new ErrnoException(ErrnoException.EBADF, "lcreate: fid clunked meanwhile");
        }
        forget(dir);
        return new P9Reply.Lcreate(qid(st), 0);
    }

    /** The daemon's umask would narrow the mode the guest asked for; put it back. */
    private void keepMode(int fd, int mode) throws ErrnoException {
        if ((mode & umask) != 0) {
            LinuxFs.chmodFd(fd, mode);
        }
    }

    private void read(int tag, P9Request.Read r, ByteBuffer out) throws ErrnoException {
        Fid f = fid(r.fid());
        int start = out.position();
        int room = Math.min(out.limit() - start, msize) - P9Codec.READ_DATA_OFFSET;
        int count = (int) Math.min(Integer.toUnsignedLong(r.count()), room);
        if (f.kind == Fid.Kind.XATTR) {
            P9Codec.finishRead(out, start, tag, 0); // no attributes are kept
            return;
        }
        ByteBuffer data = out.duplicate();
        data.position(start + P9Codec.READ_DATA_OFFSET).limit(start + P9Codec.READ_DATA_OFFSET + count);
        int n = f.withFd(fd -> LinuxFs.pread(fd, data, r.offset()));
        P9Codec.finishRead(out, start, tag, n);
    }

    private P9Reply write(P9Request.Write w) throws ErrnoException {
        Fid f = fid(w.fid());
        if (f.kind == Fid.Kind.XATTR) {
            throw new ErrnoException(ErrnoException.EOPNOTSUPP, "xattr write");
        }
        return new P9Reply.Write(f.withFd(fd -> writeInPieces(fd, w.data(), w.offset())));
    }

    /**
     * pwrite(2)s {@code data} at {@code offset} in pieces of at most {@link #WRITE_PIECE}; a piece the
     * file system takes only in part, or refuses after earlier ones went in, ends it as a short write.
     */
    static int writeInPieces(int fd, ByteBuffer data, long offset) throws ErrnoException {
        int total = 0;
        do {
            ByteBuffer piece = data.slice(data.position(), Math.min(data.remaining(), WRITE_PIECE));
            int n;
            try {
                n = LinuxFs.pwrite(fd, piece, offset + total);
            } catch (ErrnoException e) {
                if (total > 0) {
                    return total;
                }
                throw e;
            }
            data.position(data.position() + n);
            total += n;
            if (n < piece.capacity()) {
                break;
            }
        } while (data.hasRemaining());
        return total;
    }

    private void readdir(int tag, P9Request.Readdir r, ByteBuffer out) throws ErrnoException {
        Fid f = fid(r.fid());
        if (!f.isDirectory()) {
            throw new ErrnoException(ErrnoException.EBADF, "readdir of an unopened directory");
        }
        int start = out.position();
        int room = Math.min(out.limit() - start, msize) - P9Codec.READ_DATA_OFFSET;
        int count = (int) Math.min(Integer.toUnsignedLong(r.count()), room);
        ByteBuffer entries = out.duplicate();
        entries.position(start + P9Codec.READ_DATA_OFFSET).limit(start + P9Codec.READ_DATA_OFFSET + count);
        // dirents of one directory are read under its fid: the offset is the descriptor's
        synchronized (f) {
            f.withFd(fd -> packEntries(fd, r.offset(), count, entries));
        }
        P9Codec.finishReaddir(out, start, tag, entries.position() - start - P9Codec.READ_DATA_OFFSET);
    }

    /** Packs the directory's entries from {@code offset} into {@code entries} until the next does not fit. */
    private ByteBuffer packEntries(int fd, long offset, int count, ByteBuffer entries) throws ErrnoException {
        LinuxFs.Stat dirStat = LinuxFs.stat(fd);
        // entries share the directory's device (a mount point inside is rare): mix its device in the same way
        long deviceMix = qid(dirStat).path() ^ dirStat.ino();
        LinuxFs.lseek(fd, offset, 0);
        ByteBuffer raw = DIRENTS.get();
        while (true) {
            raw.clear().limit(Math.min(Math.max(count, 512), raw.capacity()));
            int n = LinuxFs.getdents(fd, raw);
            if (n <= 0) {
                return entries;
            }
            for (LinuxFs.DirEntry e : LinuxFs.parseDirents(raw, n)) {
                Qid q = new Qid(direntQidType(e.type()), 0, e.ino() ^ deviceMix);
                if (!P9Codec.putDirEntry(entries, q, e.nextOffset(), (byte) e.type(), e.name())) {
                    return entries;
                }
            }
        }
    }

    private static byte direntQidType(int dtype) {
        return switch (dtype) {
            case 4 -> Qid.QTDIR;
            case 10 -> Qid.QTSYMLINK;
            default -> Qid.QTFILE;
        };
    }

    private P9Reply fsync(P9Request.Fsync s) throws ErrnoException {
        Fid f = fid(s.fid());
        f.withFdIfOpen(fd -> {
            LinuxFs.fsync(fd, s.datasync() != 0);
            return Boolean.TRUE;
        });
        return new P9Reply.Fsync();
    }

    // --- attributes ---

    private P9Reply getattr(Fid f) throws ErrnoException {
        LinuxFs.Stat st = f.withFdIfOpen(LinuxFs::stat);
        if (st == null) {
            st = statPath(f.path());
        }
        int owner = guestOwner(st);
        return new P9Reply.Getattr(GETATTR_BASIC_AND_BTIME, qid(st), st.mode(), owner, owner, st.nlink(),
                st.rdevEncoded(), st.size(), st.blksize(), st.blocks(),
                st.atimeSec(), st.atimeNsec(), st.mtimeSec(), st.mtimeNsec(), st.ctimeSec(), st.ctimeNsec(),
                st.btimeSec(), st.btimeNsec(), 0, 0);
    }

    /** The guest's uid and gid of a file: root's for the daemon user's files, whatever their group, else nobody's. */
    private int guestOwner(LinuxFs.Stat st) {
        return st.uid() == ownerUid ? 0 : NOBODY;
    }

    private P9Reply setattr(P9Request.Setattr s) throws ErrnoException {
        Fid f = fid(s.fid());
        P9Reply done = f.withFdIfOpen(fd -> setattr(f, s, fd));
        if (done != null) {
            return done;
        }
        int fd = pathFd(f.path());
        try {
            return setattr(f, s, fd);
        } finally {
            LinuxFs.close(fd);
        }
    }

    private P9Reply setattr(Fid f, P9Request.Setattr s, int fd) throws ErrnoException {
        int valid = s.valid();
        LinuxFs.Stat st = LinuxFs.stat(fd);
        boolean symlink = st.isSymlink();
        if ((valid & 1) != 0 && !symlink) {
            LinuxFs.chmodFd(fd, safeMode(s.mode(), st.isDir()));
        }
        if ((valid & 8) != 0) {
            if (!st.isRegular()) {
                throw new ErrnoException(st.isDir() ? ErrnoException.EISDIR : ErrnoException.EINVAL, "truncate");
            }
            LinuxFs.truncateFd(fd, s.size());
        }
        if ((valid & (16 | 32)) != 0) {
            long aSec = 0, aNsec = LinuxFs.UTIME_OMIT, mSec = 0, mNsec = LinuxFs.UTIME_OMIT;
            if ((valid & 16) != 0) {
                boolean given = (valid & 128) != 0;
                aSec = given ? s.atimeSec() : 0;
                aNsec = given ? s.atimeNsec() : LinuxFs.UTIME_NOW;
            }
            if ((valid & 32) != 0) {
                boolean given = (valid & 256) != 0;
                mSec = given ? s.mtimeSec() : 0;
                mNsec = given ? s.mtimeNsec() : LinuxFs.UTIME_NOW;
            }
            if (symlink) {
                int dir = dirFd(Fid.parent(f.path()));
                try {
                    LinuxFs.utimensAt(dir, Fid.lastName(f.path()), aSec, aNsec, mSec, mNsec);
                } finally {
                    LinuxFs.close(dir);
                }
            } else {
                LinuxFs.utimensFd(fd, aSec, aNsec, mSec, mNsec);
            }
        }
        // uid and gid (2, 4): ownership is mapped, everything belongs to the host user
        return new P9Reply.Setattr();
    }

    private P9Reply statfs() throws ErrnoException {
        LinuxFs.StatFs s = LinuxFs.statfs(rootFd);
        return new P9Reply.Statfs(0x01021997, (int) s.bsize(), s.blocks(), s.bfree(), s.bavail(), s.files(),
                s.ffree(), s.fsid(), (int) s.namelen());
    }

    private P9Reply xattrWalk(P9Request.XattrWalk x) throws ErrnoException {
        Fid f = fid(x.fid());
        if (!x.name().isEmpty()) {
            throw new ErrnoException(ErrnoException.ENODATA, "xattr");
        }
        // listing: there are none (extended attributes are not shared)
        addFid(x.newFid(), new Fid(f.path(), Fid.Kind.XATTR, Qid.QTFILE));
        return new P9Reply.XattrWalk(0);
    }

    private String readlink(Fid f) throws ErrnoException {
        int fd = pathFd(f.path());
        try {
            if (!LinuxFs.stat(fd).isSymlink()) {
                throw new ErrnoException(ErrnoException.EINVAL, "readlink of a file that is no symlink");
            }
            return LinuxFs.readlinkAt(fd, "");
        } finally {
            LinuxFs.close(fd);
        }
    }

    // --- creating and removing names ---

    private P9Reply mkdir(P9Request.Mkdir m) throws ErrnoException {
        Fid dir = directory(m.dfid());
        String name = Names.component(m.name());
        int d = dirFd(dir.path());
        try {
            int mode = safeMode(m.mode(), true);
            LinuxFs.mkdirAt(d, name, mode);
            LinuxFs.Stat st = LinuxFs.statAt(d, name);
            if ((st.mode() & 07777) != mode) {
                fixMode(Fid.child(dir.path(), name), mode);
                st = LinuxFs.statAt(d, name);
            }
            return new P9Reply.Mkdir(qid(st));
        } finally {
            LinuxFs.close(d);
        }
    }

    private void fixMode(String path, int mode) throws ErrnoException {
        int fd = pathFd(path);
        try {
            LinuxFs.chmodFd(fd, mode);
        } finally {
            LinuxFs.close(fd);
        }
    }

    private P9Reply symlink(P9Request.Symlink s) throws ErrnoException {
        Fid dir = directory(s.fid());
        String name = Names.component(s.name());
        if (s.target().isEmpty()) {
            throw new ErrnoException(ErrnoException.ENOENT, "symlink");
        }
        int d = dirFd(dir.path());
        try {
            // the target is only text: the server never follows it, the guest kernel resolves it in the guest
            LinuxFs.symlinkAt(s.target(), d, name);
            return new P9Reply.Symlink(qid(LinuxFs.statAt(d, name)));
        } finally {
            LinuxFs.close(d);
        }
    }

    private P9Reply mknod(P9Request.Mknod m) throws ErrnoException {
        Fid dir = directory(m.dfid());
        String name = Names.component(m.name());
        int type = m.mode() & LinuxFs.S_IFMT;
        if (type != LinuxFs.S_IFREG && type != LinuxFs.S_IFIFO && type != 0) {
            // device nodes and sockets would reach past the folder into the host's kernel
            throw new ErrnoException(ErrnoException.EPERM, "mknod: only regular files and FIFOs");
        }
        int d = dirFd(dir.path());
        try {
            int perm = safeMode(m.mode(), false);
            int mode = (type == 0 ? LinuxFs.S_IFREG : type) | perm;
            LinuxFs.mknodAt(d, name, mode, 0);
            LinuxFs.Stat st = LinuxFs.statAt(d, name);
            if ((st.mode() & 07777) != perm && type != LinuxFs.S_IFIFO) {
                fixMode(Fid.child(dir.path(), name), perm);
                st = LinuxFs.statAt(d, name);
            }
            return new P9Reply.Mknod(qid(st));
        } finally {
            LinuxFs.close(d);
        }
    }

    private P9Reply link(P9Request.Link l) throws ErrnoException {
        Fid dir = directory(l.dfid());
        Fid target = fid(l.fid());
        if (target.path().isEmpty() || target.isDirectory()) {
            throw new ErrnoException(ErrnoException.EPERM, "link");
        }
        String name = Names.component(l.name());
        int from = dirFd(Fid.parent(target.path()));
        try {
            int to = dirFd(dir.path());
            try {
                LinuxFs.linkAt(from, Fid.lastName(target.path()), to, name);
            } finally {
                LinuxFs.close(to);
            }
        } finally {
            LinuxFs.close(from);
        }
        return new P9Reply.Link();
    }

    private P9Reply rename(P9Request.Rename r) throws ErrnoException {
        Fid f = fid(r.fid());
        if (f.path().isEmpty()) {
            throw new ErrnoException(ErrnoException.EBUSY, "rename of the root");
        }
        Fid to = directory(r.dfid());
        move(Fid.parent(f.path()), Fid.lastName(f.path()), to.path(), Names.component(r.name()));
        return new P9Reply.Rename();
    }

    private P9Reply renameAt(P9Request.RenameAt r) throws ErrnoException {
        Fid from = directory(r.oldDirFid());
        Fid to = directory(r.newDirFid());
        move(from.path(), Names.component(r.oldName()), to.path(), Names.component(r.newName()));
        return new P9Reply.RenameAt();
    }

    private void move(String fromDir, String fromName, String toDir, String toName) throws ErrnoException {
        int a = dirFd(fromDir);
        try {
            int b = dirFd(toDir);
            try {
                LinuxFs.renameAt(a, fromName, b, toName);
            } finally {
                LinuxFs.close(b);
            }
        } finally {
            LinuxFs.close(a);
        }
        String from = Fid.child(fromDir, fromName);
        String to = Fid.child(toDir, toName);
        for (Fid f : fids.values()) {
            f.renamed(from, to);
        }
    }

    private P9Reply unlinkAt(P9Request.UnlinkAt u) throws ErrnoException {
        Fid dir = directory(u.dirFid());
        unlink(dir.path(), Names.component(u.name()), u.flags() & AT_REMOVEDIR);
        return new P9Reply.UnlinkAt();
    }

    private P9Reply remove(P9Request.Remove r) throws ErrnoException {
        Fid f = fid(r.fid());
        try {
            if (f.path().isEmpty()) {
                throw new ErrnoException(ErrnoException.EBUSY, "remove of the root");
            }
            unlink(Fid.parent(f.path()), Fid.lastName(f.path()), f.isDirectory() ? AT_REMOVEDIR : 0);
        } finally {
            // Tremove clunks the fid whether or not the removal worked
            fids.remove(r.fid(), f);
            forget(f);
        }
        return new P9Reply.Remove();
    }

    private void unlink(String dirPath, String name, int flags) throws ErrnoException {
        int d = dirFd(dirPath);
        try {
            LinuxFs.unlinkAt(d, name, flags);
        } finally {
            LinuxFs.close(d);
        }
    }

    // --- locks ---

    private P9Reply lock(P9Request.Lock l) throws ErrnoException {
        Fid f = fid(l.fid());
        if (l.type() < 0 || l.type() > 2) {
            throw new ErrnoException(ErrnoException.EINVAL, "lock type");
        }
        // never blocks the server: a lock held elsewhere is answered BLOCKED and the guest retries
        boolean got = f.withFd(fd -> LinuxFs.setLock(fd, l.type(), l.start(), l.length()));
        return new P9Reply.Lock((byte) (got ? 0 : 1));
    }

    private P9Reply getLock(P9Request.GetLock g) throws ErrnoException {
        Fid f = fid(g.fid());
        if (g.type() < 0 || g.type() > 2) {
            throw new ErrnoException(ErrnoException.EINVAL, "lock type");
        }
        LinuxFs.Flock held = f.withFd(fd -> LinuxFs.getLock(fd, g.type(), g.start(), g.length()));
        if (held.type() == 2) {
            return new P9Reply.GetLock((byte) 2, g.start(), g.length(), g.procId(), g.clientId());
        }
        return new P9Reply.GetLock((byte) held.type(), held.start(), held.length(), held.pid(), "host");
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
                    reserveOpen();
                    try {
                        f.open(openChecked(s.path(), hostFlags(s.openFlags()) & ~LinuxFs.O_TRUNC), s.openFlags());
                    } catch (ErrnoException e) {
                        openFiles.decrementAndGet();
                        throw e;
                    }
                } catch (ErrnoException e) {
                    f.stale = true;
                    log.accept("fid " + s.fid() + " (" + s.path() + ") cannot be reopened: " + e.getMessage());
                }
            }
            fids.put(s.fid(), f);
        }
    }

    /** Counts one more open descriptor of this sandbox, or EMFILE at {@link #MAX_OPEN}. */
    private void reserveOpen() throws ErrnoException {
        if (openFiles.incrementAndGet() > MAX_OPEN) {
            openFiles.decrementAndGet();
            throw new ErrnoException(ErrnoException.EMFILE, "this sandbox has " + MAX_OPEN + " files open");
        }
    }

    /** Drops a fid, giving back its descriptor's place in {@link #MAX_OPEN}. */
    private void forget(Fid f) {
        if (f.drop()) {
            openFiles.decrementAndGet();
        }
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
