package dev.kosa8.workspace;

import static java.util.Objects.requireNonNull;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * The 9P2000.L R-messages, one per T-message in {@link P9Request} plus {@link Lerror}, which
 * answers any request that failed. Strings are byte strings, one char per byte (ISO-8859-1): a
 * char above U+00FF cannot be encoded.
 */
sealed interface P9Reply {

    /** Rlerror: the request failed with this Linux errno. */
    record Lerror(int errno) implements P9Reply {
    }

    /** Rversion: the msize both sides will use, and "9P2000.L" or "unknown". */
    record Version(int msize, String version) implements P9Reply {
        public Version {
            requireNonNull(version, "version");
        }
    }

    record Auth(Qid qid) implements P9Reply {
        public Auth {
            requireNonNull(qid, "qid");
        }
    }

    record Attach(Qid qid) implements P9Reply {
        public Attach {
            requireNonNull(qid, "qid");
        }
    }

    record Flush() implements P9Reply {
    }

    /** Rwalk: one qid per name walked; fewer than asked means the walk stopped early. */
    record Walk(List<Qid> qids) implements P9Reply {
        public Walk {
            qids = List.copyOf(qids);
        }
    }

    record Lopen(Qid qid, int iounit) implements P9Reply {
        public Lopen {
            requireNonNull(qid, "qid");
        }
    }

    record Lcreate(Qid qid, int iounit) implements P9Reply {
        public Lcreate {
            requireNonNull(qid, "qid");
        }
    }

    /** Rread: the bytes between {@code data}'s position and limit. */
    record Read(ByteBuffer data) implements P9Reply {
        public Read {
            requireNonNull(data, "data");
        }
    }

    record Write(int count) implements P9Reply {
    }

    record Clunk() implements P9Reply {
    }

    record Remove() implements P9Reply {
    }

    record Statfs(int type, int bsize, long blocks, long bfree, long bavail, long files, long ffree, long fsid,
            int namelen) implements P9Reply {
    }

    record Symlink(Qid qid) implements P9Reply {
        public Symlink {
            requireNonNull(qid, "qid");
        }
    }

    record Mknod(Qid qid) implements P9Reply {
        public Mknod {
            requireNonNull(qid, "qid");
        }
    }

    record Rename() implements P9Reply {
    }

    record Readlink(String target) implements P9Reply {
        public Readlink {
            requireNonNull(target, "target");
        }
    }

    /** Rgetattr: {@code valid} says which of the fields the server filled in (P9_GETATTR_* bits). */
    record Getattr(long valid, Qid qid, int mode, int uid, int gid, long nlink, long rdev, long size, long blksize,
            long blocks, long atimeSec, long atimeNsec, long mtimeSec, long mtimeNsec, long ctimeSec,
            long ctimeNsec, long btimeSec, long btimeNsec, long gen, long dataVersion) implements P9Reply {
        public Getattr {
            requireNonNull(qid, "qid");
        }
    }

    record Setattr() implements P9Reply {
    }

    record XattrWalk(long size) implements P9Reply {
    }

    record XattrCreate() implements P9Reply {
    }

    /**
     * Rreaddir: packed entries, each qid[13] offset[8] type[1] name[s]; see
     * {@link P9Codec#putDirEntry} and {@link P9Codec#dirEntries}.
     */
    record Readdir(ByteBuffer data) implements P9Reply {
        public Readdir {
            requireNonNull(data, "data");
        }
    }

    record Fsync() implements P9Reply {
    }

    /** Rlock: P9_LOCK_SUCCESS (0), BLOCKED (1), ERROR (2) or GRACE (3). */
    record Lock(byte status) implements P9Reply {
    }

    record GetLock(byte type, long start, long length, int procId, String clientId) implements P9Reply {
        public GetLock {
            requireNonNull(clientId, "clientId");
        }
    }

    record Link() implements P9Reply {
    }

    record Mkdir(Qid qid) implements P9Reply {
        public Mkdir {
            requireNonNull(qid, "qid");
        }
    }

    record RenameAt() implements P9Reply {
    }

    record UnlinkAt() implements P9Reply {
    }
}
