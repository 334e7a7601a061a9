package dev.kosa8.protocol;

/**
 * One change a {@link FileOp.Watch} saw.
 *
 * @param kind what happened
 * @param path the absolute guest path it happened to; for {@link Kind#OVERFLOW}, the watched directory
 */
public record WatchEvent(Kind kind, String path) {
    public WatchEvent {
        if (kind == null) {
            throw new ProtocolException("no event kind");
        }
        path = Limits.checkPath(path);
    }

    /**
     * What happened. A rename is two events, as inotify (and fsnotify) report it: {@link #RENAME} of the old path,
     * {@link #CREATE} of the new.
     */
    public enum Kind {
        CREATE, WRITE, REMOVE, RENAME, CHMOD,
        /** Events were lost here: the guest kernel's queue or the host's bound on pending events overflowed. */
        OVERFLOW
    }
}
