package dev.kosa8.workspace;

import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The 9P2000.L wire format, as the Linux v9fs client speaks it. A frame is size[4] type[1] tag[2]
 * then the body, little-endian, where size counts the whole frame including itself; strings are
 * len[2] plus bytes; a qid is type[1] version[4] path[8].
 *
 * <p>The guest is untrusted, so {@link #decodeRequest} has explicit limits and one failure mode:
 * it returns a request or throws {@link P9Exception}, never allocates more than the frame holds,
 * and does a bounded amount of work per byte. A malformed body is answered (Rlerror with the
 * frame's tag, connection kept); only a broken size field is fatal, because then the next frame
 * cannot be found.
 *
 * <p>Strings are byte strings carried one char per byte (ISO-8859-1): Linux names are bytes in
 * no particular encoding and must round-trip exactly. The codec refuses NUL bytes but not '/':
 * whether a slash is allowed depends on the operation, which the server checks.
 *
 * <p>Replies are written into a caller's buffer; the caller bounds a reply by msize by setting the
 * buffer's limit. Rread and Rreaddir have zero-copy helpers: the server reads file data or packs
 * entries straight into the reply buffer at {@link #READ_DATA_OFFSET}, then writes the header.
 */
final class P9Codec {
    /** size[4] type[1] tag[2]. */
    static final int HEADER = 7;
    /** Where an Rread's or Rreaddir's data starts: after the header and count[4]. */
    static final int READ_DATA_OFFSET = HEADER + 4;
    /** The most names one Twalk may carry (MAXWELEM in every 9P implementation). */
    static final int MAX_WALK = 16;
    /** The longest string accepted: PATH_MAX, so a symlink target always fits. */
    static final int MAX_STRING = 4096;
    /** The tag of a Tversion, which has no request to match. */
    static final int NOTAG = 0xffff;
    /** "No fid", as in a Tattach without authentication. */
    static final int NOFID = 0xffff_ffff;

    private static final int RLERROR = 7, TSTATFS = 8, TLOPEN = 12, TLCREATE = 14, TSYMLINK = 16, TMKNOD = 18,
            TRENAME = 20, TREADLINK = 22, TGETATTR = 24, TSETATTR = 26, TXATTRWALK = 30, TXATTRCREATE = 32,
            TREADDIR = 40, TFSYNC = 50, TLOCK = 52, TGETLOCK = 54, TLINK = 70, TMKDIR = 72, TRENAMEAT = 74,
            TUNLINKAT = 76, TAUTH = 102, TATTACH = 104, TWALK = 110, TREAD = 116, TCLUNK = 120, TREMOVE = 122;
    /** The types the server's reader (and the write window) look at before decoding. */
    static final int TVERSION = 100, TFLUSH = 108, TWRITE = 118;
    /** Every R-message type is its T-message type plus one. */
    private static final int R = 1;

    /** qid[13] offset[8] type[1] len[2]: a directory entry before its name's bytes. */
    private static final int DIR_ENTRY_FIXED = Qid.SIZE + 8 + 1 + 2;

    private P9Codec() {
    }

    /** One entry of an Rreaddir's data. */
    record DirEntry(Qid qid, long offset, byte type, String name) {
        DirEntry {
            Objects.requireNonNull(qid, "qid");
            Objects.requireNonNull(name, "name");
        }
    }

    /**
     * Peeks at the size field at {@code buf}'s position without moving it, so the caller can split
     * a byte stream into frames.
     *
     * @param maxFrame the largest frame accepted: the server's limit before Tversion, the
     *                 negotiated msize after
     * @return -1 if fewer than 4 bytes are available, else the whole frame's length (7..maxFrame)
     * @throws P9Exception always fatal: a size below 7 or above maxFrame
     */
    static int frameLength(ByteBuffer buf, int maxFrame) throws P9Exception {
        if (buf.remaining() < 4) {
            return -1;
        }
        ByteBuffer le = buf.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int at = buf.position();
        int tag = buf.remaining() >= HEADER ? le.getShort(at + 5) & 0xffff : -1;
        return (int) P9Reader.checkSize(le.getInt(at), maxFrame, tag);
    }

    /** The bytes of a Tversion for 9P2000.L before and after its msize: size 21, type 100, NOTAG; the version. */
    private static final byte[] VERSION_HEAD = {21, 0, 0, 0, 100, -1, -1};
    private static final byte[] VERSION_TAIL = {8, 0, '9', 'P', '2', '0', '0', '0', '.', 'L'};
    /** The length of such a Tversion. */
    static final int VERSION_FRAME = 21;

    /**
     * Where the first Tversion for 9P2000.L starts between {@code buf}'s
     * position and limit, or -1 if none starts there whole. A server that
     * awaits a new session (see {@link WorkspaceServer}) skips to it: it is
     * the first message of any mount, and cannot be mistaken for the tail of
     * another message unless the guest wrote these 21 bytes into a file.
     */
    static int findVersion(ByteBuffer buf) {
        int last = buf.limit() - VERSION_FRAME;
        search:
        for (int at = buf.position(); at <= last; at++) {
            for (int i = 0; i < VERSION_HEAD.length; i++) {
                if (buf.get(at + i) != VERSION_HEAD[i]) {
                    continue search;
                }
            }
            for (int i = 0; i < VERSION_TAIL.length; i++) {
                if (buf.get(at + 11 + i) != VERSION_TAIL[i]) {
                    continue search;
                }
            }
            return at;
        }
        return -1;
    }

    /**
     * Decodes one T-message.
     *
     * @param frame    exactly one whole frame, size field included (see {@link #frameLength});
     *                 its position and limit are left unchanged, and a {@link P9Request.Write}'s
     *                 data is a view of it
     * @param maxFrame the largest frame accepted
     * @throws P9Exception for any malformed, over-limit or unknown message
     */
    static P9Framed decodeRequest(ByteBuffer frame, int maxFrame) throws P9Exception {
        P9Reader r = P9Reader.open(frame, maxFrame);
        P9Request request = switch (r.type()) {
            case TVERSION -> new P9Request.Version(r.u32(), r.string());
            case TAUTH -> new P9Request.Auth(r.u32(), r.string(), r.string(), r.u32());
            case TATTACH -> new P9Request.Attach(r.u32(), r.u32(), r.string(), r.string(), r.u32());
            case TFLUSH -> new P9Request.Flush(r.u16());
            case TWALK -> new P9Request.Walk(r.u32(), r.u32(), r.names());
            case TLOPEN -> new P9Request.Lopen(r.u32(), r.u32());
            case TLCREATE -> new P9Request.Lcreate(r.u32(), r.string(), r.u32(), r.u32(), r.u32());
            case TREAD -> new P9Request.Read(r.u32(), r.u64(), r.count());
            case TWRITE -> new P9Request.Write(r.u32(), r.u64(), r.data());
            case TCLUNK -> new P9Request.Clunk(r.u32());
            case TREMOVE -> new P9Request.Remove(r.u32());
            case TSTATFS -> new P9Request.Statfs(r.u32());
            case TSYMLINK -> new P9Request.Symlink(r.u32(), r.string(), r.string(), r.u32());
            case TMKNOD -> new P9Request.Mknod(r.u32(), r.string(), r.u32(), r.u32(), r.u32(), r.u32());
            case TRENAME -> new P9Request.Rename(r.u32(), r.u32(), r.string());
            case TREADLINK -> new P9Request.Readlink(r.u32());
            case TGETATTR -> new P9Request.Getattr(r.u32(), r.u64());
            case TSETATTR -> new P9Request.Setattr(r.u32(), r.u32(), r.u32(), r.u32(), r.u32(), r.u64(), r.u64(),
                    r.u64(), r.u64(), r.u64());
            case TXATTRWALK -> new P9Request.XattrWalk(r.u32(), r.u32(), r.string());
            case TXATTRCREATE -> new P9Request.XattrCreate(r.u32(), r.string(), r.u64(), r.u32());
            case TREADDIR -> new P9Request.Readdir(r.u32(), r.u64(), r.count());
            case TFSYNC -> new P9Request.Fsync(r.u32(), r.u32());
            case TLOCK -> new P9Request.Lock(r.u32(), r.u8(), r.u32(), r.u64(), r.u64(), r.u32(), r.string());
            case TGETLOCK -> new P9Request.GetLock(r.u32(), r.u8(), r.u64(), r.u64(), r.u32(), r.string());
            case TLINK -> new P9Request.Link(r.u32(), r.u32(), r.string());
            case TMKDIR -> new P9Request.Mkdir(r.u32(), r.string(), r.u32(), r.u32());
            case TRENAMEAT -> new P9Request.RenameAt(r.u32(), r.string(), r.u32(), r.string());
            case TUNLINKAT -> new P9Request.UnlinkAt(r.u32(), r.string(), r.u32());
            default -> throw new P9Exception("unknown message type " + r.type(), r.tag(), P9Exception.EPROTO, false);
        };
        r.end();
        return new P9Framed(r.tag(), request);
    }

    /**
     * Writes one whole reply frame at {@code out}'s position and moves the position past it.
     *
     * @throws BufferOverflowException if the frame does not fit before out's limit; out's
     *                                 position is then unchanged
     */
    static void encodeReply(int tag, P9Reply reply, ByteBuffer out) {
        P9Writer w = new P9Writer(out);
        switch (reply) {
            case P9Reply.Lerror e -> w.head(RLERROR, tag).u32(e.errno());
            case P9Reply.Version v -> w.head(TVERSION + R, tag).u32(v.msize()).string(v.version());
            case P9Reply.Auth a -> w.head(TAUTH + R, tag).qid(a.qid());
            case P9Reply.Attach a -> w.head(TATTACH + R, tag).qid(a.qid());
            case P9Reply.Flush _ -> w.head(TFLUSH + R, tag);
            case P9Reply.Walk wk -> {
                w.head(TWALK + R, tag).u16(checkedCount(wk.qids().size()));
                wk.qids().forEach(w::qid);
            }
            case P9Reply.Lopen o -> w.head(TLOPEN + R, tag).qid(o.qid()).u32(o.iounit());
            case P9Reply.Lcreate c -> w.head(TLCREATE + R, tag).qid(c.qid()).u32(c.iounit());
            case P9Reply.Read rd -> w.head(TREAD + R, tag).data(rd.data());
            case P9Reply.Write wr -> w.head(TWRITE + R, tag).u32(wr.count());
            case P9Reply.Clunk _ -> w.head(TCLUNK + R, tag);
            case P9Reply.Remove _ -> w.head(TREMOVE + R, tag);
            case P9Reply.Statfs s -> w.head(TSTATFS + R, tag).u32(s.type()).u32(s.bsize()).u64(s.blocks())
                    .u64(s.bfree()).u64(s.bavail()).u64(s.files()).u64(s.ffree()).u64(s.fsid()).u32(s.namelen());
            case P9Reply.Symlink s -> w.head(TSYMLINK + R, tag).qid(s.qid());
            case P9Reply.Mknod m -> w.head(TMKNOD + R, tag).qid(m.qid());
            case P9Reply.Rename _ -> w.head(TRENAME + R, tag);
            case P9Reply.Readlink l -> w.head(TREADLINK + R, tag).string(l.target());
            case P9Reply.Getattr g -> w.head(TGETATTR + R, tag).u64(g.valid()).qid(g.qid()).u32(g.mode()).u32(g.uid())
                    .u32(g.gid()).u64(g.nlink()).u64(g.rdev()).u64(g.size()).u64(g.blksize()).u64(g.blocks())
                    .u64(g.atimeSec()).u64(g.atimeNsec()).u64(g.mtimeSec()).u64(g.mtimeNsec())
                    .u64(g.ctimeSec()).u64(g.ctimeNsec()).u64(g.btimeSec()).u64(g.btimeNsec())
                    .u64(g.gen()).u64(g.dataVersion());
            case P9Reply.Setattr _ -> w.head(TSETATTR + R, tag);
            case P9Reply.XattrWalk x -> w.head(TXATTRWALK + R, tag).u64(x.size());
            case P9Reply.XattrCreate _ -> w.head(TXATTRCREATE + R, tag);
            case P9Reply.Readdir d -> w.head(TREADDIR + R, tag).data(d.data());
            case P9Reply.Fsync _ -> w.head(TFSYNC + R, tag);
            case P9Reply.Lock l -> w.head(TLOCK + R, tag).u8(l.status());
            case P9Reply.GetLock g -> w.head(TGETLOCK + R, tag).u8(g.type()).u64(g.start()).u64(g.length())
                    .u32(g.procId()).string(g.clientId());
            case P9Reply.Link _ -> w.head(TLINK + R, tag);
            case P9Reply.Mkdir m -> w.head(TMKDIR + R, tag).qid(m.qid());
            case P9Reply.RenameAt _ -> w.head(TRENAMEAT + R, tag);
            case P9Reply.UnlinkAt _ -> w.head(TUNLINKAT + R, tag);
        }
        w.finish();
    }

    /**
     * Completes an Rread whose {@code count} data bytes the caller already placed at
     * {@code frameStart + READ_DATA_OFFSET} (typically by reading the file straight into the
     * buffer), and moves out's position to the end of the frame.
     *
     * @throws BufferOverflowException if the frame would end past out's limit
     */
    static void finishRead(ByteBuffer out, int frameStart, int tag, int count) {
        finishData(out, frameStart, TREAD + R, tag, count);
    }

    /**
     * Completes an Rreaddir whose entries the caller packed with {@link #putDirEntry} starting at
     * {@code frameStart + READ_DATA_OFFSET}; {@code count} is their total size in bytes.
     */
    static void finishReaddir(ByteBuffer out, int frameStart, int tag, int count) {
        finishData(out, frameStart, TREADDIR + R, tag, count);
    }

    /**
     * Appends one directory entry, qid[13] offset[8] type[1] name[s], at out's position.
     *
     * @param offset the cookie the guest passes back in the next Treaddir to continue after this entry
     * @param type   the d_type (DT_DIR, DT_REG, ...)
     * @return false, with out unchanged, if the entry does not fit before out's limit; the server
     *     then stops packing and sends what it has
     */
    static boolean putDirEntry(ByteBuffer out, Qid qid, long offset, byte type, String name) {
        if (out.remaining() < DIR_ENTRY_FIXED + P9Writer.checkedLength(name)) {
            return false;
        }
        P9Writer w = new P9Writer(out);
        w.qid(qid).u64(offset).u8(type).string(name);
        w.commit();
        return true;
    }

    /** Splits an Rreaddir's data into entries; the inverse of {@link #putDirEntry}, for clients and tests. */
    static List<DirEntry> dirEntries(ByteBuffer data) throws P9Exception {
        P9Reader r = P9Reader.body(data, -1);
        List<DirEntry> entries = new ArrayList<>();
        while (r.hasRemaining()) {
            entries.add(new DirEntry(r.qid(), r.u64(), r.u8(), r.string()));
        }
        return entries;
    }

    /**
     * Writes one whole request frame at out's position; the client side, for host-side test clients.
     * Writes what it is given, including names the decoder refuses.
     *
     * @throws BufferOverflowException if the frame does not fit; out's position is then unchanged
     */
    static void encodeRequest(int tag, P9Request request, ByteBuffer out) {
        P9Writer w = new P9Writer(out);
        switch (request) {
            case P9Request.Version v -> w.head(TVERSION, tag).u32(v.msize()).string(v.version());
            case P9Request.Auth a -> w.head(TAUTH, tag).u32(a.afid()).string(a.uname()).string(a.aname())
                    .u32(a.nUname());
            case P9Request.Attach a -> w.head(TATTACH, tag).u32(a.fid()).u32(a.afid()).string(a.uname())
                    .string(a.aname()).u32(a.nUname());
            case P9Request.Flush f -> w.head(TFLUSH, tag).u16(f.oldTag());
            case P9Request.Walk wk -> {
                w.head(TWALK, tag).u32(wk.fid()).u32(wk.newFid()).u16(checkedCount(wk.names().size()));
                wk.names().forEach(w::string);
            }
            case P9Request.Lopen o -> w.head(TLOPEN, tag).u32(o.fid()).u32(o.flags());
            case P9Request.Lcreate c -> w.head(TLCREATE, tag).u32(c.fid()).string(c.name()).u32(c.flags())
                    .u32(c.mode()).u32(c.gid());
            case P9Request.Read rd -> w.head(TREAD, tag).u32(rd.fid()).u64(rd.offset()).u32(rd.count());
            case P9Request.Write wr -> w.head(TWRITE, tag).u32(wr.fid()).u64(wr.offset()).data(wr.data());
            case P9Request.Clunk c -> w.head(TCLUNK, tag).u32(c.fid());
            case P9Request.Remove rm -> w.head(TREMOVE, tag).u32(rm.fid());
            case P9Request.Statfs s -> w.head(TSTATFS, tag).u32(s.fid());
            case P9Request.Symlink s -> w.head(TSYMLINK, tag).u32(s.fid()).string(s.name()).string(s.target())
                    .u32(s.gid());
            case P9Request.Mknod m -> w.head(TMKNOD, tag).u32(m.dfid()).string(m.name()).u32(m.mode())
                    .u32(m.major()).u32(m.minor()).u32(m.gid());
            case P9Request.Rename rn -> w.head(TRENAME, tag).u32(rn.fid()).u32(rn.dfid()).string(rn.name());
            case P9Request.Readlink l -> w.head(TREADLINK, tag).u32(l.fid());
            case P9Request.Getattr g -> w.head(TGETATTR, tag).u32(g.fid()).u64(g.requestMask());
            case P9Request.Setattr s -> w.head(TSETATTR, tag).u32(s.fid()).u32(s.valid()).u32(s.mode())
                    .u32(s.uid()).u32(s.gid()).u64(s.size()).u64(s.atimeSec()).u64(s.atimeNsec())
                    .u64(s.mtimeSec()).u64(s.mtimeNsec());
            case P9Request.XattrWalk x -> w.head(TXATTRWALK, tag).u32(x.fid()).u32(x.newFid()).string(x.name());
            case P9Request.XattrCreate x -> w.head(TXATTRCREATE, tag).u32(x.fid()).string(x.name()).u64(x.size())
                    .u32(x.flags());
            case P9Request.Readdir d -> w.head(TREADDIR, tag).u32(d.fid()).u64(d.offset()).u32(d.count());
            case P9Request.Fsync f -> w.head(TFSYNC, tag).u32(f.fid()).u32(f.datasync());
            case P9Request.Lock l -> w.head(TLOCK, tag).u32(l.fid()).u8(l.type()).u32(l.flags()).u64(l.start())
                    .u64(l.length()).u32(l.procId()).string(l.clientId());
            case P9Request.GetLock g -> w.head(TGETLOCK, tag).u32(g.fid()).u8(g.type()).u64(g.start())
                    .u64(g.length()).u32(g.procId()).string(g.clientId());
            case P9Request.Link l -> w.head(TLINK, tag).u32(l.dfid()).u32(l.fid()).string(l.name());
            case P9Request.Mkdir m -> w.head(TMKDIR, tag).u32(m.dfid()).string(m.name()).u32(m.mode())
                    .u32(m.gid());
            case P9Request.RenameAt rn -> w.head(TRENAMEAT, tag).u32(rn.oldDirFid()).string(rn.oldName())
                    .u32(rn.newDirFid()).string(rn.newName());
            case P9Request.UnlinkAt u -> w.head(TUNLINKAT, tag).u32(u.dirFid()).string(u.name()).u32(u.flags());
        }
        w.finish();
    }

    /**
     * Decodes one R-message; the client side, for host-side test clients. The same limits apply
     * as for requests, except that any frame size the buffer holds is accepted.
     *
     * @param frame exactly one whole frame; its position and limit are left unchanged
     */
    static P9Response decodeReply(ByteBuffer frame) throws P9Exception {
        P9Reader r = P9Reader.open(frame, Integer.MAX_VALUE);
        P9Reply reply = switch (r.type()) {
            case RLERROR -> new P9Reply.Lerror(r.u32());
            case TVERSION + R -> new P9Reply.Version(r.u32(), r.string());
            case TAUTH + R -> new P9Reply.Auth(r.qid());
            case TATTACH + R -> new P9Reply.Attach(r.qid());
            case TFLUSH + R -> new P9Reply.Flush();
            case TWALK + R -> new P9Reply.Walk(r.qids());
            case TLOPEN + R -> new P9Reply.Lopen(r.qid(), r.u32());
            case TLCREATE + R -> new P9Reply.Lcreate(r.qid(), r.u32());
            case TREAD + R -> new P9Reply.Read(r.data());
            case TWRITE + R -> new P9Reply.Write(r.u32());
            case TCLUNK + R -> new P9Reply.Clunk();
            case TREMOVE + R -> new P9Reply.Remove();
            case TSTATFS + R -> new P9Reply.Statfs(r.u32(), r.u32(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64(),
                    r.u64(), r.u32());
            case TSYMLINK + R -> new P9Reply.Symlink(r.qid());
            case TMKNOD + R -> new P9Reply.Mknod(r.qid());
            case TRENAME + R -> new P9Reply.Rename();
            case TREADLINK + R -> new P9Reply.Readlink(r.string());
            case TGETATTR + R -> new P9Reply.Getattr(r.u64(), r.qid(), r.u32(), r.u32(), r.u32(), r.u64(), r.u64(),
                    r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64(),
                    r.u64(), r.u64(), r.u64());
            case TSETATTR + R -> new P9Reply.Setattr();
            case TXATTRWALK + R -> new P9Reply.XattrWalk(r.u64());
            case TXATTRCREATE + R -> new P9Reply.XattrCreate();
            case TREADDIR + R -> new P9Reply.Readdir(r.data());
            case TFSYNC + R -> new P9Reply.Fsync();
            case TLOCK + R -> new P9Reply.Lock(r.u8());
            case TGETLOCK + R -> new P9Reply.GetLock(r.u8(), r.u64(), r.u64(), r.u32(), r.string());
            case TLINK + R -> new P9Reply.Link();
            case TMKDIR + R -> new P9Reply.Mkdir(r.qid());
            case TRENAMEAT + R -> new P9Reply.RenameAt();
            case TUNLINKAT + R -> new P9Reply.UnlinkAt();
            default -> throw new P9Exception("unknown reply type " + r.type(), r.tag(), P9Exception.EPROTO, false);
        };
        r.end();
        return new P9Response(r.tag(), reply);
    }

    private static void finishData(ByteBuffer out, int frameStart, int type, int tag, int count) {
        if (count < 0 || frameStart < 0) {
            throw new IllegalArgumentException("frameStart " + frameStart + " and count " + count + " must be >= 0");
        }
        if ((tag & ~0xffff) != 0) {
            throw new IllegalArgumentException("tag " + tag + " is not a 16-bit value");
        }
        long end = (long) frameStart + READ_DATA_OFFSET + count;
        if (end > out.limit()) {
            throw new BufferOverflowException();
        }
        ByteBuffer le = out.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        le.putInt(frameStart, READ_DATA_OFFSET + count)
                .put(frameStart + 4, (byte) type)
                .putShort(frameStart + 5, (short) tag)
                .putInt(frameStart + HEADER, count);
        out.position((int) end);
    }

    private static int checkedCount(int n) {
        if (n > 0xffff) {
            throw new IllegalArgumentException("a walk of " + n + " elements does not fit a 16-bit count");
        }
        return n;
    }
}
