package dev.kosa8.workspace;

/**
 * A 9P qid: the server's identity for a file. The guest's kernel uses {@code path} as the inode
 * number and compares {@code version} to decide whether cached pages are stale, so both must be
 * stable for as long as the file exists.
 *
 * @param type    {@link #QTDIR}, {@link #QTSYMLINK} or {@link #QTFILE}
 * @param version changes when the file's content changes (0 when the server does not track it)
 * @param path    unique per file for the life of the export
 */
record Qid(byte type, int version, long path) {
    static final byte QTDIR = (byte) 0x80;
    static final byte QTSYMLINK = 0x02;
    static final byte QTFILE = 0;

    /** Bytes a qid takes on the wire: type[1] version[4] path[8]. */
    static final int SIZE = 13;
}
