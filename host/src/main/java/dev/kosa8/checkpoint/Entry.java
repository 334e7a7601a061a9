package dev.kosa8.checkpoint;

/**
 * One thing in a snapshot of the folder.
 *
 * @param path     relative to the folder, as a byte string ({@link ByteNames}); "" is the folder itself
 * @param mode     the permission bits, setuid, setgid and sticky included (the low 12 bits)
 * @param size     a file's size in bytes; 0 for anything else
 * @param sha256   a file's content hash (lower-case hex); null for anything else
 * @param target   a symlink's target as a byte string, never resolved; null for anything else
 * @param identity a file's stat identity when it was captured; null for anything else
 */
record Entry(String path, Kind kind, int mode, long mtimeSec, int mtimeNsec, long size, String sha256,
        String target, Identity identity) {
    Entry {
        if (!ByteNames.isSafeRelativePath(path)) {
            throw new IllegalArgumentException("unsafe path in a snapshot: " + ByteNames.display(path));
        }
        if ((kind == Kind.FILE) != (sha256 != null && identity != null) || (kind == Kind.SYMLINK) != (target != null)) {
            throw new IllegalArgumentException("malformed " + kind.json + " entry " + ByteNames.display(path));
        }
        if (sha256 != null && !sha256.matches("[0-9a-f]{64}")) {
            throw new IllegalArgumentException("bad sha256 for " + ByteNames.display(path));
        }
        if (path.isEmpty() && kind != Kind.DIR) {
            throw new IllegalArgumentException("the folder itself must be a directory");
        }
        mode &= 07777;
    }

    static Entry dir(String path, Posix.Stat s) {
        return new Entry(path, Kind.DIR, s.permissions(), s.mtimeSec(), s.mtimeNsec(), 0, null, null, null);
    }

    static Entry file(String path, Posix.Stat s, String sha256) {
        return new Entry(path, Kind.FILE, s.permissions(), s.mtimeSec(), s.mtimeNsec(), s.size(), sha256, null,
                Identity.of(s));
    }

    static Entry symlink(String path, Posix.Stat s, String target) {
        return new Entry(path, Kind.SYMLINK, s.permissions(), s.mtimeSec(), s.mtimeNsec(), 0, null, target, null);
    }

    static Entry fifo(String path, Posix.Stat s) {
        return new Entry(path, Kind.FIFO, s.permissions(), s.mtimeSec(), s.mtimeNsec(), 0, null, null, null);
    }

    String name() {
        return ByteNames.name(path);
    }

    boolean sameMtime(Posix.Stat s) {
        return s.mtimeSec() == mtimeSec && s.mtimeNsec() == mtimeNsec;
    }
}
