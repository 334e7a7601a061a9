package dev.kosa8.workspace;

import java.nio.ByteBuffer;

/**
 * The 9P2000.L requests on an opened fid's descriptor, for {@link P9Operations}: Tread, Twrite,
 * Treaddir, Tfsync, Tlock and Tgetlock. None resolves a path: each works on the descriptor that
 * Tlopen or Tlcreate opened (under {@link Fid#withFd}, so a racing clunk cannot close it beneath the
 * request), and so stays within the confinement rules stated at the top of {@link P9Operations}.
 */
final class P9FileIo {
    /** Raw dirents of one Treaddir, per worker thread: a reply is at most msize, so is what is read for one. */
    private static final ThreadLocal<ByteBuffer> DIRENTS =
            ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(WorkspaceServer.MSIZE));

    private final P9Operations ops;

    P9FileIo(P9Operations ops) {
        this.ops = ops;
    }

    void read(int tag, P9Request.Read r, ByteBuffer out) throws ErrnoException {
        Fid f = ops.fid(r.fid());
        int start = out.position();
        int room = Math.min(out.limit() - start, ops.msize()) - P9Codec.READ_DATA_OFFSET;
        int count = (int) Math.min(Integer.toUnsignedLong(r.count()), room);
        if (f.kind == Fid.Kind.XATTR) {
            P9Codec.finishRead(out, start, tag, 0); // no attributes are kept
            return;
        }
        ByteBuffer data = out.duplicate();
        data.position(start + P9Codec.READ_DATA_OFFSET).limit(start + P9Codec.READ_DATA_OFFSET + count);
        int n = f.withFd(fd -> FdCalls.pread(fd, data, r.offset()));
        P9Codec.finishRead(out, start, tag, n);
    }

    P9Reply write(P9Request.Write w) throws ErrnoException {
        Fid f = ops.fid(w.fid());
        if (f.kind == Fid.Kind.XATTR) {
            throw new ErrnoException(ErrnoException.EOPNOTSUPP, "xattr write");
        }
        HeldChanges held = ops.roots().held();
        if (held != null && (f.inHeldLayer || held.unitOf(f.path()) != null)) {
            held.space().chargeBytes(w.data().remaining()); // the held layer's bound: ENOSPC past it
        }
        return new P9Reply.Write(f.withFd(fd -> writeInPieces(fd, w.data(), w.offset())));
    }

    /**
     * pwrite(2)s {@code data} at {@code offset} in pieces of at most {@link P9Operations#WRITE_PIECE}; a piece the
     * file system takes only in part, or refuses after earlier ones went in, ends it as a short write.
     */
    static int writeInPieces(int fd, ByteBuffer data, long offset) throws ErrnoException {
        int total = 0;
        do {
            ByteBuffer piece = data.slice(data.position(), Math.min(data.remaining(), P9Operations.WRITE_PIECE));
            int n;
            try {
                n = FdCalls.pwrite(fd, piece, offset + total);
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

    void readdir(int tag, P9Request.Readdir r, ByteBuffer out) throws ErrnoException {
        Fid f = ops.fid(r.fid());
        if (!f.isDirectory()) {
            throw new ErrnoException(ErrnoException.EBADF, "readdir of an unopened directory");
        }
        int start = out.position();
        int room = Math.min(out.limit() - start, ops.msize()) - P9Codec.READ_DATA_OFFSET;
        int count = (int) Math.min(Integer.toUnsignedLong(r.count()), room);
        ByteBuffer entries = out.duplicate();
        entries.position(start + P9Codec.READ_DATA_OFFSET).limit(start + P9Codec.READ_DATA_OFFSET + count);
        // dirents of one directory are read under its fid: the offset is the descriptor's
        synchronized (f) {
            HeldChanges held = ops.roots().held();
            if (held != null && !held.unitNamesIn(f.path()).isEmpty()
                    && ops.roots().rootFor(f.path()) != held.treeFd()) {
                f.withFd(fd -> packMerged(fd, f.path(), held, r.offset(), entries));
            } else {
                f.withFd(fd -> packEntries(fd, r.offset(), count, entries));
            }
        }
        P9Codec.finishReaddir(out, start, tag, entries.position() - start - P9Codec.READ_DATA_OFFSET);
    }

    /** Packs the directory's entries from {@code offset} into {@code entries} until the next does not fit. */
    private ByteBuffer packEntries(int fd, long offset, int count, ByteBuffer entries) throws ErrnoException {
        LinuxFs.Stat dirStat = FdCalls.stat(fd);
        // entries share the directory's device (a mount point inside is rare): mix its device in the same way
        long deviceMix = ops.qid(dirStat).path() ^ dirStat.ino();
        FdCalls.lseek(fd, offset, 0);
        ByteBuffer raw = DIRENTS.get();
        while (true) {
            raw.clear().limit(Math.min(Math.max(count, 512), raw.capacity()));
            int n = FdCalls.getdents(fd, raw);
            if (n <= 0) {
                return entries;
            }
            for (LinuxFs.DirEntry e : FdCalls.parseDirents(raw, n)) {
                Qid q = new Qid(direntQidType(e.type()), 0, e.ino() ^ deviceMix);
                if (!P9Codec.putDirEntry(entries, q, e.nextOffset(), (byte) e.type(), e.name())) {
                    return entries;
                }
            }
        }
    }

    /**
     * A folder directory with held units in it: its own entries but the units' names, then each
     * unit the held layer has (a unit the guest deleted is simply missing). The offsets are the
     * entries' places in that list, which is the same from call to call while nothing changes.
     */
    private ByteBuffer packMerged(int fd, String dirPath, HeldChanges held, long offset, ByteBuffer entries)
            throws ErrnoException {
        java.util.Set<String> units = held.unitNamesIn(dirPath);
        java.util.List<Object[]> list = new java.util.ArrayList<>();
        LinuxFs.Stat dirStat = FdCalls.stat(fd);
        long deviceMix = ops.qid(dirStat).path() ^ dirStat.ino();
        FdCalls.lseek(fd, 0, 0);
        ByteBuffer raw = DIRENTS.get();
        while (true) {
            raw.clear();
            int n = FdCalls.getdents(fd, raw);
            if (n <= 0) {
                break;
            }
            for (LinuxFs.DirEntry e : FdCalls.parseDirents(raw, n)) {
                if (!units.contains(e.name())) {
                    list.add(new Object[] {new Qid(direntQidType(e.type()), 0, e.ino() ^ deviceMix), e.type(), e.name()});
                }
            }
        }
        for (String name : new java.util.TreeSet<>(units)) {
            LinuxFs.Stat st = TreeCopy.statOrNull(held.treeFd(), Fid.child(dirPath, name));
            if (st != null) {
                int type = st.isDir() ? LinuxFs.DT_DIR : st.isSymlink() ? LinuxFs.DT_LNK : LinuxFs.DT_REG;
                list.add(new Object[] {ops.qid(st), type, name});
            }
        }
        for (long i = Math.max(offset, 0); i < list.size(); i++) {
            Object[] e = list.get((int) i);
            if (!P9Codec.putDirEntry(entries, (Qid) e[0], i + 1, (byte) (int) (Integer) e[1], (String) e[2])) {
                break;
            }
        }
        return entries;
    }

    private static byte direntQidType(int dtype) {
        return switch (dtype) {
            case 4 -> Qid.QTDIR;
            case 10 -> Qid.QTSYMLINK;
            default -> Qid.QTFILE;
        };
    }

    P9Reply fsync(P9Request.Fsync s) throws ErrnoException {
        Fid f = ops.fid(s.fid());
        f.withFdIfOpen(fd -> {
            FdCalls.fsync(fd, s.datasync() != 0);
            return Boolean.TRUE;
        });
        return new P9Reply.Fsync();
    }

    P9Reply lock(P9Request.Lock l) throws ErrnoException {
        Fid f = ops.fid(l.fid());
        if (l.type() < 0 || l.type() > 2) {
            throw new ErrnoException(ErrnoException.EINVAL, "lock type");
        }
        // never blocks the server: a lock held elsewhere is answered BLOCKED and the guest retries
        boolean got = f.withFd(fd -> FdCalls.setLock(fd, l.type(), l.start(), l.length()));
        return new P9Reply.Lock((byte) (got ? 0 : 1));
    }

    P9Reply getLock(P9Request.GetLock g) throws ErrnoException {
        Fid f = ops.fid(g.fid());
        if (g.type() < 0 || g.type() > 2) {
            throw new ErrnoException(ErrnoException.EINVAL, "lock type");
        }
        LinuxFs.Flock held = f.withFd(fd -> FdCalls.getLock(fd, g.type(), g.start(), g.length()));
        if (held.type() == 2) {
            return new P9Reply.GetLock((byte) 2, g.start(), g.length(), g.procId(), g.clientId());
        }
        return new P9Reply.GetLock((byte) held.type(), held.start(), held.length(), held.pid(), "host");
    }
}
