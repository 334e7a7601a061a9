package dev.kosa8.checkpoint;

/**
 * What stat says of a regular file that changes whenever its content may have:
 * any write moves the mtime and the ctime, and nothing but the kernel sets a
 * ctime, so a file whose identity is the same as when it was hashed still has
 * that hash, with one exception: timestamps come from a coarse clock (a tick
 * of a few milliseconds, a second on some file systems), so a write in the
 * same tick as the stat leaves them equal. {@link KnownContent} therefore
 * trusts only identities whose ctime was already older than the capture, with
 * a margin, when they were recorded (the "racy" rule that git uses too).
 *
 * <p>The device is recorded as 0: a fork's folder that is a copy-on-write
 * view gets a new device number each time it is mounted (overlayfs), which
 * would make every file look unknown after a stop and start, rehashed at
 * each capture and rewritten, copied up whole, at each rewind. The inode,
 * size and both times, the ctime to the nanosecond and set by no one but
 * the kernel, tell a file apart without it. (Manifests written before
 * record the device: their files are hashed once more, then known.)
 */
record Identity(long dev, long ino, long size, long mtimeSec, int mtimeNsec, long ctimeSec, int ctimeNsec) {
    static Identity of(Posix.Stat s) {
        return new Identity(0, s.ino(), s.size(), s.mtimeSec(), s.mtimeNsec(), s.ctimeSec(), s.ctimeNsec());
    }
}
