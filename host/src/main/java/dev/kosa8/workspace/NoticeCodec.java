package dev.kosa8.workspace;

import dev.kosa8.protocol.Ws9p;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;

/**
 * The bytes of the cache's messages from host to guest ({@link Ws9p}): Rnotices, each entry a name
 * that changed and what is there now, and Rsyncs. {@link FolderNotices} sends them.
 */
final class NoticeCodec {
    /** The most one notice holds; the module keeps at most 1 MiB of them waiting. */
    static final int MAX_NOTICE = 64 << 10;
    /** Stands, in {@link #encode}'s attributes, for a file just as the guest's own change left it: no entry is sent. */
    static final P9Reply.Getattr ECHO = new P9Reply.Getattr(0, new Qid(Qid.QTFILE, 0, 0), 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    private NoticeCodec() {
    }

    /** An Rsync of {@code seq}, its position at its end. */
    static ByteBuffer rsync(int seq) {
        return ByteBuffer.allocate(Ws9p.SYNC_SIZE).order(ByteOrder.LITTLE_ENDIAN).putInt(Ws9p.SYNC_SIZE)
                .put((byte) Ws9p.RSYNC).putShort((short) Ws9p.NOTAG).putInt(seq);
    }

    /**
     * The notices that say {@code names}, each with what is there now ({@code attributes}), each at
     * most {@code max} bytes, each with its position at its end (as a reply before it is sent).
     * {@link FolderWatch#EVERYTHING} among them says it all.
     */
    static List<ByteBuffer> encode(Collection<FolderWatch.Name> names,
                                   Function<FolderWatch.Name, P9Reply.Getattr> attributes, int max) {
        // (attributes gives ECHO for a file just as the guest left it: no entry)
        Collection<FolderWatch.Name> all = names.contains(FolderWatch.EVERYTHING)
                ? List.of(FolderWatch.EVERYTHING) : names;
        List<ByteBuffer> out = new ArrayList<>();
        ByteBuffer b = null;
        for (FolderWatch.Name n : all) {
            byte[] name = n.name().getBytes(StandardCharsets.ISO_8859_1);
            P9Reply.Getattr now = n.equals(FolderWatch.EVERYTHING) ? null : attributes.apply(n);
            if (now == ECHO) {
                continue;
            }
            int entry = Ws9p.NOTICE_ENTRY + name.length + 1 + (now == null ? 0 : Ws9p.NOTICE_ATTRS);
            if (b == null || b.remaining() < entry) {
                if (b != null) {
                    out.add(finish(b));
                }
                b = ByteBuffer.allocate(max).order(ByteOrder.LITTLE_ENDIAN);
                b.position(Ws9p.HEADER);
            }
            b.putLong(n.dir()).putShort((short) name.length).put(name);
            if (now == null) {
                b.put((byte) Ws9p.NOTICE_GONE);
            } else {
                b.put((byte) Ws9p.NOTICE_FILE).putLong(now.qid().path()).put(now.qid().type()).putInt(now.mode())
                        .putInt(now.uid()).putInt(now.gid()).putLong(now.nlink()).putLong(now.size())
                        .putLong(now.blocks()).putLong(now.atimeSec()).putInt((int) now.atimeNsec())
                        .putLong(now.mtimeSec()).putInt((int) now.mtimeNsec()).putLong(now.ctimeSec())
                        .putInt((int) now.ctimeNsec());
            }
        }
        if (b != null) {
            out.add(finish(b));
        }
        return out;
    }

    private static ByteBuffer finish(ByteBuffer b) {
        int size = b.position();
        b.putInt(0, size).put(4, (byte) Ws9p.RNOTICE).putShort(5, (short) Ws9p.NOTAG);
        return b;
    }
}
