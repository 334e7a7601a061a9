package dev.kosa8.workspace;

import static java.util.Objects.requireNonNull;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * The 9P2000.L T-messages the Linux v9fs client sends, as the guest wrote them. Nothing here has
 * been checked beyond the wire format: fids may be unknown, names may contain '/', flags may be
 * nonsense. The server validates each per operation; {@link P9Codec} only guarantees that strings
 * hold no NUL byte and are at most {@link P9Codec#MAX_STRING} bytes, and that a walk has at most
 * {@link P9Codec#MAX_WALK} names.
 *
 * <p>Strings are Linux byte strings carried one char per byte (ISO-8859-1), so any name survives
 * unchanged whatever its encoding. Unsigned wire fields (fids, counts, modes) are carried in Java's
 * signed types with the same bits.
 */
sealed interface P9Request {

    /** Tversion: the first message; proposes the largest frame and the protocol dialect. */
    record Version(int msize, String version) implements P9Request {
        public Version {
            requireNonNull(version, "version");
        }
    }

    /** Tauth: asks for an authentication fid; kosa8 serves no authentication. */
    record Auth(int afid, String uname, String aname, int nUname) implements P9Request {
        public Auth {
            requireNonNull(uname, "uname");
            requireNonNull(aname, "aname");
        }
    }

    /** Tattach: binds {@code fid} to the root of the export named {@code aname}. */
    record Attach(int fid, int afid, String uname, String aname, int nUname) implements P9Request {
        public Attach {
            requireNonNull(uname, "uname");
            requireNonNull(aname, "aname");
        }
    }

    /** Tflush: abandon the request tagged {@code oldTag} (0..65535). */
    record Flush(int oldTag) implements P9Request {
    }

    /** Twalk: clone {@code fid} to {@code newFid} and walk it through up to 16 single names. */
    record Walk(int fid, int newFid, List<String> names) implements P9Request {
        public Walk {
            names = List.copyOf(names);
        }
    }

    /** Tlopen: open with Linux open(2) flags. */
    record Lopen(int fid, int flags) implements P9Request {
    }

    /** Tlcreate: create and open {@code name} in directory {@code fid}, which then becomes the file. */
    record Lcreate(int fid, String name, int flags, int mode, int gid) implements P9Request {
        public Lcreate {
            requireNonNull(name, "name");
        }
    }

    /**
     * Tread. {@code count} is never negative: a wire count of 2^31 or more decodes as
     * {@link Integer#MAX_VALUE}, so clamping it with {@code Math.min} is safe.
     */
    record Read(int fid, long offset, int count) implements P9Request {
    }

    /**
     * Twrite. {@code data} is a read-only view of the frame buffer, not a copy: it is valid only
     * until the caller reuses that buffer.
     */
    record Write(int fid, long offset, ByteBuffer data) implements P9Request {
        public Write {
            requireNonNull(data, "data");
        }
    }

    /** Tclunk: forget a fid. */
    record Clunk(int fid) implements P9Request {
    }

    /** Tremove: remove the file and clunk the fid. */
    record Remove(int fid) implements P9Request {
    }

    /** Tstatfs. */
    record Statfs(int fid) implements P9Request {
    }

    /** Tsymlink: create symlink {@code name} in directory {@code fid} pointing at {@code target}. */
    record Symlink(int fid, String name, String target, int gid) implements P9Request {
        public Symlink {
            requireNonNull(name, "name");
            requireNonNull(target, "target");
        }
    }

    /** Tmknod. */
    record Mknod(int dfid, String name, int mode, int major, int minor, int gid) implements P9Request {
        public Mknod {
            requireNonNull(name, "name");
        }
    }

    /** Trename: move {@code fid} to {@code name} in directory {@code dfid}. */
    record Rename(int fid, int dfid, String name) implements P9Request {
        public Rename {
            requireNonNull(name, "name");
        }
    }

    /** Treadlink. */
    record Readlink(int fid) implements P9Request {
    }

    /** Tgetattr: {@code requestMask} is a set of P9_GETATTR_* bits. */
    record Getattr(int fid, long requestMask) implements P9Request {
    }

    /** Tsetattr: {@code valid} is a set of P9_SETATTR_* bits saying which fields apply. */
    record Setattr(int fid, int valid, int mode, int uid, int gid, long size, long atimeSec, long atimeNsec,
            long mtimeSec, long mtimeNsec) implements P9Request {
    }

    /** Txattrwalk: an empty {@code name} asks for the list of attribute names. */
    record XattrWalk(int fid, int newFid, String name) implements P9Request {
        public XattrWalk {
            requireNonNull(name, "name");
        }
    }

    /** Txattrcreate. */
    record XattrCreate(int fid, String name, long size, int flags) implements P9Request {
        public XattrCreate {
            requireNonNull(name, "name");
        }
    }

    /** Treaddir: {@code offset} is a cookie from a previous entry; {@code count} as for {@link Read}. */
    record Readdir(int fid, long offset, int count) implements P9Request {
    }

    /** Tfsync: {@code datasync} non-zero asks for fdatasync. */
    record Fsync(int fid, int datasync) implements P9Request {
    }

    /** Tlock: a POSIX byte-range lock request. */
    record Lock(int fid, byte type, int flags, long start, long length, int procId, String clientId)
            implements P9Request {
        public Lock {
            requireNonNull(clientId, "clientId");
        }
    }

    /** Tgetlock: test for a conflicting lock. */
    record GetLock(int fid, byte type, long start, long length, int procId, String clientId)
            implements P9Request {
        public GetLock {
            requireNonNull(clientId, "clientId");
        }
    }

    /** Tlink: hard-link {@code fid} as {@code name} in directory {@code dfid}. */
    record Link(int dfid, int fid, String name) implements P9Request {
        public Link {
            requireNonNull(name, "name");
        }
    }

    /** Tmkdir. */
    record Mkdir(int dfid, String name, int mode, int gid) implements P9Request {
        public Mkdir {
            requireNonNull(name, "name");
        }
    }

    /** Trenameat. */
    record RenameAt(int oldDirFid, String oldName, int newDirFid, String newName) implements P9Request {
        public RenameAt {
            requireNonNull(oldName, "oldName");
            requireNonNull(newName, "newName");
        }
    }

    /** Tunlinkat: {@code flags} may hold AT_REMOVEDIR. */
    record UnlinkAt(int dirFid, String name, int flags) implements P9Request {
        public UnlinkAt {
            requireNonNull(name, "name");
        }
    }
}
