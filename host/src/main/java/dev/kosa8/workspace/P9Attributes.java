package dev.kosa8.workspace;

/**
 * The 9P2000.L requests on a file's attributes, for {@link P9Operations}: Tgetattr, Tsetattr,
 * Treadlink and Txattrwalk. Confined by the rules stated at the top of {@link P9Operations}: a file
 * is reached only through its open descriptor or {@link P9Operations#pathFd} (never following a
 * final symlink), a symlink's times are set from its directory's {@link P9Operations#dirFd}, and
 * modes pass {@link P9Operations#safeMode}. Ownership is mapped as that class says: the daemon
 * user's files are the guest root's, and a chown changes nothing.
 */
final class P9Attributes {
    private final P9Operations ops;
    /** The daemon user's uid: its files are the guest root's. */
    private final int ownerUid;

    P9Attributes(P9Operations ops, int ownerUid) {
        this.ops = ops;
        this.ownerUid = ownerUid;
    }

    P9Reply getattr(Fid f) throws ErrnoException {
        LinuxFs.Stat st = f.withFdIfOpen(FdCalls::stat);
        return getattr(st != null ? st : ops.statPath(f.path()));
    }

    /** What a Tgetattr of the file at {@code path} answers (the held layer's file where the path is held). */
    P9Reply.Getattr getattr(String path) throws ErrnoException {
        return getattr(ops.statPath(path));
    }

    private P9Reply.Getattr getattr(LinuxFs.Stat st) {
        int owner = guestOwner(st);
        return new P9Reply.Getattr(P9Operations.GETATTR_BASIC_AND_BTIME, ops.qid(st), st.mode(), owner, owner,
                st.nlink(), st.rdevEncoded(), st.size(), st.blksize(), st.blocks(),
                st.atimeSec(), st.atimeNsec(), st.mtimeSec(), st.mtimeNsec(), st.ctimeSec(), st.ctimeNsec(),
                st.btimeSec(), st.btimeNsec(), 0, 0);
    }

    /** The guest's uid and gid of a file: root's for the daemon user's files, whatever their group, else nobody's. */
    private int guestOwner(LinuxFs.Stat st) {
        return st.uid() == ownerUid ? 0 : P9Operations.NOBODY;
    }

    P9Reply setattr(P9Request.Setattr s) throws ErrnoException {
        Fid f = ops.fid(s.fid());
        if (ops.roots().heldUnit(f.path(), f.isDirectory()) != null) {
            // by its path in the held layer: a descriptor opened from the folder before would change the folder's file
            ops.roots().rootForChange(f.path(), f.isDirectory());
        } else {
            P9Reply done = f.withFdIfOpen(fd -> setattr(f, s, fd));
            if (done != null) {
                return done;
            }
        }
        int fd = ops.pathFd(f.path());
        try {
            return setattr(f, s, fd);
        } finally {
            LinuxFs.close(fd);
        }
    }

    private P9Reply setattr(Fid f, P9Request.Setattr s, int fd) throws ErrnoException {
        int valid = s.valid();
        LinuxFs.Stat st = FdCalls.stat(fd);
        boolean symlink = st.isSymlink();
        if ((valid & 1) != 0 && !symlink) {
            FdCalls.chmodFd(fd, P9Operations.safeMode(s.mode(), st.isDir()));
        }
        if ((valid & 8) != 0) {
            if (!st.isRegular()) {
                throw new ErrnoException(st.isDir() ? ErrnoException.EISDIR : ErrnoException.EINVAL, "truncate");
            }
            FdCalls.truncateFd(fd, s.size());
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
                int dir = ops.parentFd(f.path(), false);
                try {
                    NameCalls.utimensAt(dir, Fid.lastName(f.path()), aSec, aNsec, mSec, mNsec);
                } finally {
                    LinuxFs.close(dir);
                }
            } else {
                FdCalls.utimensFd(fd, aSec, aNsec, mSec, mNsec);
            }
        }
        // uid and gid (2, 4): ownership is mapped, everything belongs to the host user
        return new P9Reply.Setattr();
    }

    P9Reply xattrWalk(P9Request.XattrWalk x) throws ErrnoException {
        Fid f = ops.fid(x.fid());
        if (!x.name().isEmpty()) {
            throw new ErrnoException(ErrnoException.ENODATA, "xattr");
        }
        // listing: there are none (extended attributes are not shared)
        ops.addFid(x.newFid(), new Fid(f.path(), Fid.Kind.XATTR, Qid.QTFILE));
        return new P9Reply.XattrWalk(0);
    }

    String readlink(Fid f) throws ErrnoException {
        int fd = ops.pathFd(f.path());
        try {
            if (!FdCalls.stat(fd).isSymlink()) {
                throw new ErrnoException(ErrnoException.EINVAL, "readlink of a file that is no symlink");
            }
            return NameCalls.readlinkAt(fd, "");
        } finally {
            LinuxFs.close(fd);
        }
    }
}
