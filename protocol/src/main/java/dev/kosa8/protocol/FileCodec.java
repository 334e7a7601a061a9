package dev.kosa8.protocol;

import java.util.ArrayList;
import java.util.List;

/**
 * The wire format of the file messages ({@link Message.FileRequest}, {@link Message.FileEntries},
 * {@link Message.WatchEvents}), beside {@link Codec}'s: an operation is a 1-byte kind and its fields; a stat is its
 * fields in {@link FileStat}'s order, its type one byte. Every enum byte, flag and count is checked.
 */
final class FileCodec {
    private static final int STAT = 1, LIST = 2, MKDIR = 3, REMOVE = 4, RENAME = 5, WATCH = 6;

    private FileCodec() {
    }

    static void request(Codec.Writer w, FileOp op) {
        switch (op) {
            case FileOp.Stat s -> w.u8(STAT).text(s.path()).u8(s.follow() ? 1 : 0);
            case FileOp.ListDir l -> w.u8(LIST).text(l.path()).i32(l.depth()).i32(l.maxEntries());
            case FileOp.MakeDir m -> w.u8(MKDIR).text(m.path()).i32(m.mode()).u8(m.existOk() ? 1 : 0);
            case FileOp.Remove r -> w.u8(REMOVE).text(r.path()).u8(r.recursive() ? 1 : 0);
            case FileOp.Rename r -> w.u8(RENAME).text(r.from()).text(r.to()).u8(r.replace() ? 1 : 0);
            case FileOp.Watch x -> w.u8(WATCH).text(x.path()).u8(x.recursive() ? 1 : 0);
        }
    }

    static FileOp request(Codec.Reader r) {
        int max = Limits.MAX_SHORT_TEXT;
        return switch (r.u8()) {
            case STAT -> new FileOp.Stat(r.text(max), r.flag());
            case LIST -> new FileOp.ListDir(r.text(max), r.i32(), r.i32());
            case MKDIR -> new FileOp.MakeDir(r.text(max), r.i32(), r.flag());
            case REMOVE -> new FileOp.Remove(r.text(max), r.flag());
            case RENAME -> new FileOp.Rename(r.text(max), r.text(max), r.flag());
            case WATCH -> new FileOp.Watch(r.text(max), r.flag());
            default -> throw new ProtocolException("unknown file operation");
        };
    }

    static void stat(Codec.Writer w, FileStat s) {
        w.text(s.path()).u8(s.type().ordinal()).i64(s.size()).i32(s.mode()).i32(s.uid()).i32(s.gid())
                .text(s.owner()).text(s.group()).i64(s.mtimeMillis()).text(s.symlinkTarget());
    }

    private static FileStat stat(Codec.Reader r) {
        return new FileStat(r.text(Limits.MAX_SHORT_TEXT), ordinal(r, FileStat.Type.values()), r.i64(), r.i32(),
                r.i32(), r.i32(), r.text(FileStat.MAX_NAME), r.text(FileStat.MAX_NAME), r.i64(),
                r.text(Limits.MAX_SHORT_TEXT));
    }

    static Message.FileEntries entries(Codec.Reader r) {
        int channel = r.i32();
        int n = r.count();
        List<FileStat> entries = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            entries.add(stat(r));
        }
        return new Message.FileEntries(channel, entries);
    }

    static Message.WatchEvents events(Codec.Reader r) {
        int channel = r.i32();
        int n = r.count();
        List<WatchEvent> events = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            events.add(new WatchEvent(ordinal(r, WatchEvent.Kind.values()), r.text(Limits.MAX_SHORT_TEXT)));
        }
        return new Message.WatchEvents(channel, events);
    }

    private static <E> E ordinal(Codec.Reader r, E[] all) {
        int o = r.u8();
        if (o >= all.length) {
            throw new ProtocolException("unknown " + all[0].getClass().getSimpleName() + " " + o);
        }
        return all[o];
    }
}
