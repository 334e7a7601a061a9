package dev.kosa8.workspace;

/**
 * The 9P2000.L requests that make, rename and remove names in the folder, for {@link P9Operations}:
 * Tmkdir, Tsymlink, Tmknod, Tlink, Trename, Trenameat, Tunlinkat and Tremove. Confined by the rules
 * stated at the top of {@link P9Operations}: every name passes {@link Names#component} and goes to
 * a *at() call on a directory resolved by {@link P9Operations#dirFd}, none of which follows a final
 * symlink; modes pass {@link P9Operations#safeMode}; only regular files and FIFOs are made.
 */
final class P9Names {
    private final P9Operations ops;

    P9Names(P9Operations ops) {
        this.ops = ops;
    }

    P9Reply mkdir(P9Request.Mkdir m) throws ErrnoException {
        Fid dir = ops.directory(m.dfid());
        String name = Names.component(m.name());
        int d = ops.parentFdForNew(Fid.child(dir.path(), name), true);
        try {
            int mode = P9Operations.safeMode(m.mode(), true);
            NameCalls.mkdirAt(d, name, mode);
            LinuxFs.Stat st = NameCalls.statAt(d, name);
            if ((st.mode() & 07777) != mode) {
                fixMode(Fid.child(dir.path(), name), mode);
                st = NameCalls.statAt(d, name);
            }
            return new P9Reply.Mkdir(ops.qid(st));
        } finally {
            LinuxFs.close(d);
        }
    }

    private void fixMode(String path, int mode) throws ErrnoException {
        int fd = ops.pathFd(path);
        try {
            FdCalls.chmodFd(fd, mode);
        } finally {
            LinuxFs.close(fd);
        }
    }

    P9Reply symlink(P9Request.Symlink s) throws ErrnoException {
        Fid dir = ops.directory(s.fid());
        String name = Names.component(s.name());
        if (s.target().isEmpty()) {
            throw new ErrnoException(ErrnoException.ENOENT, "symlink");
        }
        String path = Fid.child(dir.path(), name);
        if (ops.roots().holdsLink(path, s.target()) && ops.roots().heldUnit(path, false) == null) {
            // a host program following it would leave the folder, or see a package's files as a project's
            ops.roots().holdAlone(path, HeldPolicy.SYMLINKS);
        }
        int d = ops.parentFdForNew(path, false);
        try {
            // the target is only text: the server never follows it, the guest kernel resolves it in the guest
            NameCalls.symlinkAt(s.target(), d, name);
            return new P9Reply.Symlink(ops.qid(NameCalls.statAt(d, name)));
        } finally {
            LinuxFs.close(d);
        }
    }

    P9Reply mknod(P9Request.Mknod m) throws ErrnoException {
        Fid dir = ops.directory(m.dfid());
        String name = Names.component(m.name());
        int type = m.mode() & LinuxFs.S_IFMT;
        if (type != LinuxFs.S_IFREG && type != LinuxFs.S_IFIFO && type != 0) {
            // device nodes and sockets would reach past the folder into the host's kernel
            throw new ErrnoException(ErrnoException.EPERM, "mknod: only regular files and FIFOs");
        }
        int d = ops.parentFdForNew(Fid.child(dir.path(), name), false);
        try {
            int perm = P9Operations.safeMode(m.mode(), false);
            int mode = (type == 0 ? LinuxFs.S_IFREG : type) | perm;
            NameCalls.mknodAt(d, name, mode, 0);
            LinuxFs.Stat st = NameCalls.statAt(d, name);
            if ((st.mode() & 07777) != perm && type != LinuxFs.S_IFIFO) {
                fixMode(Fid.child(dir.path(), name), perm);
                st = NameCalls.statAt(d, name);
            }
            return new P9Reply.Mknod(ops.qid(st));
        } finally {
            LinuxFs.close(d);
        }
    }

    P9Reply link(P9Request.Link l) throws ErrnoException {
        Fid dir = ops.directory(l.dfid());
        Fid target = ops.fid(l.fid());
        if (target.path().isEmpty() || target.isDirectory()) {
            throw new ErrnoException(ErrnoException.EPERM, "link");
        }
        String name = Names.component(l.name());
        String dest = Fid.child(dir.path(), name);
        String fromUnit = ops.roots().heldUnit(target.path(), false);
        String toUnit = ops.roots().heldUnit(dest, false);
        if ((fromUnit != null || toUnit != null) && (fromUnit == null || !fromUnit.equals(toUnit))) {
            // a link between a held file and the folder would let a write to one change the other
            throw new ErrnoException(ErrnoException.EXDEV, "link across the held layer");
        }
        int from = ops.parentFd(target.path(), false);
        try {
            int to = ops.parentFdForNew(dest, false);
            try {
                String old = Fid.lastName(target.path());
                if (toUnit == null && NameCalls.statAt(from, old).isSymlink()
                        && ops.roots().holdsLink(dest, NameCalls.readlinkAt(from, old))) {
                    // link(2) of a symlink links the symlink itself: its target, read from the new place, may lead
                    // out of the folder (a/b/l -> ../../x linked as l) or into node_modules, and a hard link cannot
                    // be held alone
                    throw new ErrnoException(ErrnoException.EXDEV, "link of a symlink held at its new place");
                }
                NameCalls.linkAt(from, old, to, name);
            } finally {
                LinuxFs.close(to);
            }
        } finally {
            LinuxFs.close(from);
        }
        return new P9Reply.Link();
    }

    P9Reply rename(P9Request.Rename r) throws ErrnoException {
        Fid f = ops.fid(r.fid());
        if (f.path().isEmpty()) {
            throw new ErrnoException(ErrnoException.EBUSY, "rename of the root");
        }
        Fid to = ops.directory(r.dfid());
        move(Fid.parent(f.path()), Fid.lastName(f.path()), to.path(), Names.component(r.name()));
        return new P9Reply.Rename();
    }

    P9Reply renameAt(P9Request.RenameAt r) throws ErrnoException {
        Fid from = ops.directory(r.oldDirFid());
        Fid to = ops.directory(r.newDirFid());
        move(from.path(), Names.component(r.oldName()), to.path(), Names.component(r.newName()));
        return new P9Reply.RenameAt();
    }

    private void move(String fromDir, String fromName, String toDir, String toName) throws ErrnoException {
        String from = Fid.child(fromDir, fromName);
        String to = Fid.child(toDir, toName);
        boolean directory = false;
        if (ops.roots().held() != null) {
            HeldMoves moves = new HeldMoves(ops);
            HeldMoves.Way way = moves.check(from, to);
            if (way == HeldMoves.Way.ACROSS) {
                moves.across(from, to);
                for (Fid f : ops.fids().values()) {
                    f.renamed(from, to);
                }
                ops.roots().held().forgetIfGone(from);
                return;
            }
            directory = way == HeldMoves.Way.RENAME_DIRECTORY;
        }
        // a rename within one layer: the name moved away needs no room, nor does the one it takes (the same entry)
        int a = ops.parentFdForRemoval(from, directory);
        try {
            int b = ops.parentFd(to, directory);
            try {
                NameCalls.renameAt(a, fromName, b, toName);
            } finally {
                LinuxFs.close(b);
            }
        } finally {
            LinuxFs.close(a);
        }
        for (Fid f : ops.fids().values()) {
            f.renamed(from, to);
        }
        if (ops.roots().held() != null) {
            ops.roots().held().forgetIfGone(from);
        }
    }

    P9Reply unlinkAt(P9Request.UnlinkAt u) throws ErrnoException {
        Fid dir = ops.directory(u.dirFid());
        unlink(dir.path(), Names.component(u.name()), u.flags() & P9Operations.AT_REMOVEDIR);
        return new P9Reply.UnlinkAt();
    }

    P9Reply remove(P9Request.Remove r) throws ErrnoException {
        Fid f = ops.fid(r.fid());
        try {
            if (f.path().isEmpty()) {
                throw new ErrnoException(ErrnoException.EBUSY, "remove of the root");
            }
            unlink(Fid.parent(f.path()), Fid.lastName(f.path()), f.isDirectory() ? P9Operations.AT_REMOVEDIR : 0);
        } finally {
            // Tremove clunks the fid whether or not the removal worked
            ops.fids().remove(r.fid(), f);
            ops.forget(f);
        }
        return new P9Reply.Remove();
    }

    private void unlink(String dirPath, String name, int flags) throws ErrnoException {
        String path = Fid.child(dirPath, name);
        boolean directory = (flags & P9Operations.AT_REMOVEDIR) != 0;
        HeldChanges h = ops.roots().held();
        if (directory && h != null && ops.roots().heldUnit(path, true) == null && h.anyPresentIn(path)) {
            // the guest sees held files in it, which the folder's directory does not have
            throw new ErrnoException(ErrnoException.ENOTEMPTY, "rmdir of a directory with held files");
        }
        int d = ops.parentFdForRemoval(path, directory);
        try {
            NameCalls.unlinkAt(d, name, flags);
        } finally {
            LinuxFs.close(d);
        }
        if (h != null) {
            h.forgetIfGone(path);
        }
    }
}
