package dev.kosa8.protocol;

/**
 * The workspace's 9p link between host and guest, as kosa8 extends it: the
 * port and disks it crosses, its msize, and kosa8's own messages. Defined
 * here once for the three programs that speak it: the daemon's 9p server
 * ({@code dev.kosa8.workspace}: {@code ReadWindow}, {@code WriteWindow},
 * {@code QuietClunks}), the agent's relay ({@code dev.kosa8.agent}) and the
 * guest kernel module ({@code kosa8_ws9p.c}, whose {@code #define}s a test,
 * {@code Ws9pModuleConstantsTest}, checks against these). docs/workspace.md
 * says what each exchange is for.
 *
 * <p>Every message is framed as a 9p message, {@code size[4] type[1] tag[2]}
 * then its body, little-endian, with a type outside 9P2000.L's range, so
 * every side splits the stream as before. The guest kernel's 9p client never
 * sees one: the relay or the module sends and takes them for it.
 *
 * <p>Quiet clunks (the relay or module answers the kernel's Tclunks itself):
 * <ul>
 *   <li>{@code Tquiet} (guest to host, once per mount, after its Rversion):
 *       {@code size[4]=7 type[1]=248 tag[2]=NOTAG}.</li>
 *   <li>{@code Rquiet} (host to guest, the answer): {@code size[4]=7
 *       type[1]=249 tag[2]=NOTAG}. A host from before quiet clunks answers
 *       an Rlerror for NOTAG instead.</li>
 *   <li>{@code Tclunkq} (guest to host, in place of a Tclunk the guest has
 *       answered; never answered): the Tclunk with its type changed,
 *       {@code size[4]=11 type[1]=247 tag[2] fid[4]}.</li>
 * </ul>
 *
 * <p>The read window (a large Rread's data through a read-only disk):
 * <ul>
 *   <li>{@code Twindow} (guest to host, once per mount, after its Tversion):
 *       {@code size[4]=7 type[1]=250 tag[2]=NOTAG}.</li>
 *   <li>{@code Rreadw} (host to guest, in place of an Rread): {@code size[4]=19
 *       type[1]=251 tag[2] count[4] slot[4] serial[4]}; the data is at
 *       {@code slot * SLOT_SIZE} of the read window's disk.</li>
 *   <li>{@code Treturn} (guest to host, once the slot is read):
 *       {@code size[4]=15 type[1]=252 tag[2]=NOTAG slot[4] serial[4]}.</li>
 * </ul>
 *
 * <p>The write window (a large Twrite's data through a disk the guest writes):
 * <ul>
 *   <li>{@code Twritew} (guest to host, in place of a Twrite): the Twrite's own
 *       header with its type changed, then the slot its data is in:
 *       {@code size[4]=27 type[1]=253 tag[2] fid[4] offset[8] count[4] slot[4]}.
 *       Answered as the Twrite it stands for; the slot is the guest's again
 *       once that answer comes.</li>
 * </ul>
 *
 * <p>The guest's cache (a mount made with {@code cache=loose}, kept true to the host):
 * <ul>
 *   <li>{@code Tcache} (guest to host, once the mount caches; never answered):
 *       {@code size[4]=7 type[1]=245 tag[2]=NOTAG}.</li>
 *   <li>{@code Rnotice} (host to guest, unasked, from then on): names that changed
 *       on the host, {@code size[4] type[1]=246 tag[2]=NOTAG} then entries of
 *       {@code dir[8] nlen[2] name[nlen] kind[1]}: the directory's qid path, the
 *       name in it, and what is there now: kind 0, nothing; kind 1, a file, whose
 *       attributes follow as a Tgetattr would answer them, {@code qidpath[8]
 *       qidtype[1] mode[4] uid[4] gid[4] nlink[8] size[8] blocks[8] atime[8]
 *       atimensec[4] mtime[8] mtimensec[4] ctime[8] ctimensec[4]}. An entry of
 *       dir 0, no name and kind 0 stands for everything.</li>
 *   <li>{@code Twalkq} (guest to host, in place of a clone Twalk the module has
 *       answered, from a cached mount only; never answered): the Twalk with its
 *       type changed, {@code size[4]=17 type[1]=244 tag[2] fid[4] newfid[4]
 *       nwname[2]=0}. The host clones the fid in the order it reads.</li>
 *   <li>{@code Tlopenq} (guest to host, in place of a read-only Tlopen the
 *       module has answered, from a cached mount only; never answered): the
 *       Tlopen with its type and tag changed, {@code size[4]=15 type[1]=241
 *       tag[2]=NOTAG fid[4] flags[4]}; the host opens only a read-only one. The host opens the fid in the order it reads; where
 *       that fails, each later use of the fid's descriptor answers the open's
 *       error.</li>
 *   <li>{@code Tsync} (guest to host, from a cached mount, before a command the
 *       agent starts): {@code size[4]=11 type[1]=243 tag[2]=NOTAG seq[4]}. The
 *       host sends the notices of every change it has seen, then {@code Rsync}
 *       (host to guest): the same with type 242; the module has applied those
 *       notices when it takes the Rsync, so the command sees them.</li>
 * </ul>
 */
public final class Ws9p {
    /** The virtio-serial port the workspace's 9p traffic crosses ({@code virtserialport,name=...}). */
    public static final String PORT_NAME = "dev.kosa8.ws9p";
    /** The serial number of the read window's disk, by which the guest finds it (virtio-blk takes 20 characters). */
    public static final String READ_WINDOW_SERIAL = "kosa8-ws9p-window";
    /** The serial number of the write window's disk, by which the guest finds it (virtio-blk takes 20 characters). */
    public static final String WRITE_WINDOW_SERIAL = "kosa8-ws9p-writes";

    /**
     * The largest 9p message: 1 MiB of data and Linux's allowance for an I/O
     * message's header ({@code P9_IOHDRSZ}, 24 bytes), so a program's 1 MiB
     * block is one Tread or Twrite. The fd transport (the relay's mount)
     * clamps it to 1 MiB.
     */
    public static final int MSIZE = (1 << 20) + 24;
    /** Each slot of either window holds one message's data, at most 1 MiB. */
    public static final int SLOT_SIZE = 1 << 20;
    /** The most slots either side uses in a window, whatever the disk's size. */
    public static final int MAX_SLOTS = 1024;

    /** {@code size[4] type[1] tag[2]}: every message's header. */
    public static final int HEADER = 7;
    /** The tag of a message that answers no request, and of one that gets no answer. */
    public static final int NOTAG = 0xffff;

    public static final int TLOPENQ = 241;
    public static final int RSYNC = 242;
    public static final int TSYNC = 243;
    public static final int TWALKQ = 244;
    public static final int TCACHE = 245;
    public static final int RNOTICE = 246;
    public static final int TCLUNKQ = 247;
    public static final int TQUIET = 248;
    public static final int RQUIET = 249;
    public static final int TWINDOW = 250;
    public static final int RREADW = 251;
    public static final int TRETURN = 252;
    public static final int TWRITEW = 253;

    public static final int TCACHE_SIZE = HEADER;
    /** A Tsync or an Rsync: the header, seq[4]. */
    public static final int SYNC_SIZE = HEADER + 4;
    /** A Twalkq: the header, fid[4], newfid[4], nwname[2] = 0. */
    public static final int TWALKQ_SIZE = HEADER + 10;
    public static final int TWALKQ_FID = HEADER;
    public static final int TWALKQ_NEWFID = HEADER + 4;
    /** A Tlopenq: the header, fid[4], flags[4] (a Tlopen's size too). */
    public static final int TLOPENQ_SIZE = HEADER + 8;
    /** An Rnotice's entry before its name: dir[8] nlen[2]. */
    public static final int NOTICE_ENTRY = 10;
    /** An entry's kind, after its name: nothing is there now. */
    public static final int NOTICE_GONE = 0;
    /** An entry's kind, after its name: a file is there, its attributes follow. */
    public static final int NOTICE_FILE = 1;
    /** The attributes after a {@link #NOTICE_FILE}: qid path and type, mode, uid, gid, nlink, size, blocks, three times. */
    public static final int NOTICE_ATTRS = 81;

    /** A Tclunkq: the header, fid[4]. */
    public static final int TCLUNKQ_SIZE = HEADER + 4;
    public static final int TQUIET_SIZE = HEADER;
    public static final int RQUIET_SIZE = HEADER;
    public static final int TWINDOW_SIZE = HEADER;

    /** An Rreadw: the header, count[4], slot[4], serial[4]. */
    public static final int RREADW_SIZE = HEADER + 12;
    public static final int RREADW_COUNT = HEADER;
    public static final int RREADW_SLOT = HEADER + 4;
    public static final int RREADW_SERIAL = HEADER + 8;

    /** A Treturn: the header, slot[4], serial[4] (as the Rreadw named them). */
    public static final int TRETURN_SIZE = HEADER + 8;
    public static final int TRETURN_SLOT = HEADER;
    public static final int TRETURN_SERIAL = HEADER + 4;

    /** A Twrite before its data, {@code size[4] type[1] tag[2] fid[4] offset[8] count[4]}: where its data starts. */
    public static final int TWRITE_HEADER = HEADER + 16;
    /** Where a Twritew's count is: the Twrite's. */
    public static final int TWRITEW_COUNT = TWRITE_HEADER - 4;
    /** A Twritew: the Twrite's header, slot[4]. */
    public static final int TWRITEW_SLOT = TWRITE_HEADER;
    public static final int TWRITEW_SIZE = TWRITE_HEADER + 4;

    private Ws9p() {
    }
}
