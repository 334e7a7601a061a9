package dev.kosa8.protocol;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The wire format: a frame is a 4-byte big-endian length followed by that
 * many bytes of body; a body is a 1-byte message type followed by the
 * message's fields. Integers are big-endian; text is a 4-byte length and
 * UTF-8 bytes (malformed UTF-8 is refused); lists are a 4-byte count and their
 * items. A body must be consumed exactly: trailing bytes are an error.
 *
 * <p>{@link #decode(ByteBuffer)} never allocates more than the frame it is
 * given, and every count and length is checked against {@link Limits} and
 * against the bytes that remain before anything is read.
 */
public final class Codec {
    /** Bytes of the length prefix. */
    public static final int HEADER = 4;

    private static final int HELLO = 1, PING = 2, PONG = 3, EXEC = 4, STARTED = 5, DATA = 6, EOF = 7,
            CREDIT = 8, SIGNAL = 9, RESIZE = 10, EXITED = 11, FAILED = 12, PUT_FILE = 13, GET_FILE = 14,
            FILE_INFO = 15, MOUNT_WORKSPACE = 16, FREEZE = 17, THAW = 18, NET_OPEN = 19, NET_RESET = 20, ASK = 21,
            ANSWER = 22, CONNECT = 23, FILE_REQUEST = 24, FILE_ENTRIES = 25, WATCH_EVENTS = 26,
            NET_WINDOW_READY = 27, NET_WINDOW_DATA = 28, NET_WINDOW_RETURN = 29;

    private Codec() {
    }

    /** Encodes a message as a whole frame, length prefix included. */
    public static byte[] encode(Message m) {
        Writer w = new Writer();
        w.i32(0); // length, patched below
        switch (m) {
            case Message.Hello h -> w.u8(HELLO).i32(h.version()).text(h.software()).i64(h.bootMillis());
            case Message.Ping p -> w.u8(PING).i64(p.nonce());
            case Message.Pong p -> w.u8(PONG).i64(p.nonce());
            case Message.Exec e -> {
                Message.ExecSpec s = e.spec();
                w.u8(EXEC).i32(e.channel()).i32(s.argv().size());
                s.argv().forEach(w::text);
                w.i32(s.env().size());
                s.env().forEach((k, v) -> w.text(k).text(v));
                w.text(s.cwd()).text(s.user()).u8(s.tty() ? 1 : 0).i32(s.rows()).i32(s.columns());
            }
            case Message.Started s -> w.u8(STARTED).i32(s.channel()).i64(s.pid());
            case Message.Data d -> w.u8(DATA).i32(d.channel()).u8(d.stream().ordinal()).bytes(d.bytes());
            case Message.Eof e -> w.u8(EOF).i32(e.channel()).u8(e.stream().ordinal());
            case Message.Credit c -> w.u8(CREDIT).i32(c.channel()).u8(c.stream().ordinal()).i32(c.bytes());
            case Message.Signal s -> w.u8(SIGNAL).i32(s.channel()).i32(s.signal());
            case Message.Resize r -> w.u8(RESIZE).i32(r.channel()).i32(r.rows()).i32(r.columns());
            case Message.Exited x -> w.u8(EXITED).i32(x.channel()).i32(x.exitCode()).i32(x.signal());
            case Message.Failed f -> w.u8(FAILED).i32(f.channel()).u8(f.code().ordinal()).text(f.message());
            case Message.PutFile p -> w.u8(PUT_FILE).i32(p.channel()).text(p.path()).i32(p.mode()).text(p.user());
            case Message.FileRequest f -> FileCodec.request(w.u8(FILE_REQUEST).i32(f.channel()).text(f.user()), f.op());
            case Message.FileEntries f -> {
                w.u8(FILE_ENTRIES).i32(f.channel()).i32(f.entries().size());
                f.entries().forEach(e -> FileCodec.stat(w, e));
            }
            case Message.WatchEvents e -> {
                w.u8(WATCH_EVENTS).i32(e.channel()).i32(e.events().size());
                e.events().forEach(v -> w.u8(v.kind().ordinal()).text(v.path()));
            }
            case Message.GetFile g -> w.u8(GET_FILE).i32(g.channel()).text(g.path());
            case Message.FileInfo f -> w.u8(FILE_INFO).i32(f.channel()).i64(f.size()).i32(f.mode());
            case Message.MountWorkspace mw -> w.u8(MOUNT_WORKSPACE).i32(mw.channel()).text(mw.guestPath()).i32(mw.msize())
                    .u8((mw.afresh() ? 1 : 0) | (mw.relay() ? 2 : 0) | (mw.cache() ? 4 : 0));
            case Message.Freeze f -> w.u8(FREEZE).i32(f.channel()).i32(f.timeoutMillis());
            case Message.Thaw t -> w.u8(THAW).i32(t.channel()).i64(t.epochMillis()).bytes(t.seed());
            case Message.NetOpen o -> w.u8(NET_OPEN).i32(o.channel()).i32(o.port());
            case Message.NetReset r -> w.u8(NET_RESET).i32(r.channel());
            case Message.NetWindowReady r -> w.u8(NET_WINDOW_READY);
            case Message.NetWindowData d -> w.u8(NET_WINDOW_DATA).i32(d.channel()).i32(d.slot()).i32(d.count())
                    .i64(d.serial());
            case Message.NetWindowReturn r -> w.u8(NET_WINDOW_RETURN).i32(r.slot()).i64(r.serial());
            case Message.Connect c -> w.u8(CONNECT).i32(c.channel()).i32(c.port());
            case Message.Ask a -> w.u8(ASK).i64(a.id()).text(a.label());
            case Message.Answer a -> w.u8(ANSWER).i64(a.id()).u8(a.outcome().ordinal()).text(a.text());
        }
        byte[] frame = w.toByteArray();
        int length = frame.length - HEADER;
        if (length > Limits.MAX_FRAME) {
            throw new ProtocolException("message of " + length + " bytes exceeds the frame limit " + Limits.MAX_FRAME);
        }
        ByteBuffer.wrap(frame).putInt(0, length);
        return frame;
    }

    /**
     * Decodes one frame body (the bytes after the length prefix).
     *
     * @throws ProtocolException if the body is malformed, over a limit, or has trailing bytes
     */
    public static Message decode(ByteBuffer body) {
        if (body.remaining() > Limits.MAX_FRAME) {
            throw new ProtocolException("frame of " + body.remaining() + " bytes exceeds " + Limits.MAX_FRAME);
        }
        Reader r = new Reader(body);
        try {
            Message m = switch (r.u8()) {
                case HELLO -> new Message.Hello(r.i32(), r.text(Limits.MAX_SHORT_TEXT), r.i64());
                case PING -> new Message.Ping(r.i64());
                case PONG -> new Message.Pong(r.i64());
                case EXEC -> decodeExec(r);
                case STARTED -> new Message.Started(r.i32(), r.i64());
                case DATA -> new Message.Data(r.i32(), r.stream(), r.bytes(Limits.MAX_DATA));
                case EOF -> new Message.Eof(r.i32(), r.stream());
                case CREDIT -> new Message.Credit(r.i32(), r.stream(), r.i32());
                case SIGNAL -> new Message.Signal(r.i32(), r.i32());
                case RESIZE -> new Message.Resize(r.i32(), r.i32(), r.i32());
                case EXITED -> new Message.Exited(r.i32(), r.i32(), r.i32());
                case FAILED -> new Message.Failed(r.i32(), r.errorCode(), r.text(Limits.MAX_SHORT_TEXT));
                case PUT_FILE -> new Message.PutFile(r.i32(), r.text(Limits.MAX_SHORT_TEXT), r.i32(),
                        r.text(FileStat.MAX_NAME));
                case FILE_REQUEST -> new Message.FileRequest(r.i32(), r.text(FileStat.MAX_NAME), FileCodec.request(r));
                case FILE_ENTRIES -> FileCodec.entries(r);
                case WATCH_EVENTS -> FileCodec.events(r);
                case GET_FILE -> new Message.GetFile(r.i32(), r.text(Limits.MAX_SHORT_TEXT));
                case FILE_INFO -> new Message.FileInfo(r.i32(), r.i64(), r.i32());
                case MOUNT_WORKSPACE -> mountWorkspace(r);
                case FREEZE -> new Message.Freeze(r.i32(), r.i32());
                case THAW -> new Message.Thaw(r.i32(), r.i64(), r.bytes(512));
                case NET_OPEN -> new Message.NetOpen(r.i32(), r.i32());
                case NET_RESET -> new Message.NetReset(r.i32());
                case NET_WINDOW_READY -> new Message.NetWindowReady();
                case NET_WINDOW_DATA -> new Message.NetWindowData(r.i32(), r.i32(), r.i32(), r.i64());
                case NET_WINDOW_RETURN -> new Message.NetWindowReturn(r.i32(), r.i64());
                case CONNECT -> new Message.Connect(r.i32(), r.i32());
                case ASK -> new Message.Ask(r.i64(), r.text(Limits.MAX_LABEL));
                case ANSWER -> new Message.Answer(r.i64(), r.outcome(), r.text(Limits.MAX_SHORT_TEXT));
                default -> throw new ProtocolException("unknown message type");
            };
            if (body.hasRemaining()) {
                throw new ProtocolException(body.remaining() + " trailing bytes after " + m.getClass().getSimpleName());
            }
            return m;
        } catch (BufferUnderflowException e) {
            throw new ProtocolException("frame ends in the middle of a field");
        }
    }

    private static Message decodeExec(Reader r) {
        int channel = r.i32();
        int argc = r.count();
        List<String> argv = new ArrayList<>(argc);
        for (int i = 0; i < argc; i++) {
            argv.add(r.text(Limits.MAX_FRAME));
        }
        int envc = r.count();
        Map<String, String> env = new LinkedHashMap<>();
        for (int i = 0; i < envc; i++) {
            String k = r.text(Limits.MAX_SHORT_TEXT);
            String v = r.text(Limits.MAX_FRAME);
            if (env.put(k, v) != null) {
                throw new ProtocolException("environment variable " + k + " given twice");
            }
        }
        String cwd = r.text(Limits.MAX_SHORT_TEXT);
        String user = r.text(Limits.MAX_SHORT_TEXT);
        boolean tty = r.flag();
        return new Message.Exec(channel, new Message.ExecSpec(argv, env, cwd, user, tty, r.i32(), r.i32()));
    }

    /** Its last byte holds flags: 1 afresh, 2 relay, 4 cache (a daemon from before knew only 0 and 1). */
    private static Message.MountWorkspace mountWorkspace(Reader r) {
        int channel = r.i32();
        String path = r.text(Limits.MAX_SHORT_TEXT);
        int msize = r.i32();
        int flags = r.u8();
        if ((flags & ~7) != 0) {
            throw new ProtocolException("unknown mount flags " + flags);
        }
        return new Message.MountWorkspace(channel, path, msize, (flags & 1) != 0, (flags & 2) != 0,
                (flags & 4) != 0);
    }

    /** Reads a frame's fields; package-private for {@link FileCodec}. */
    static final class Reader {
        private final ByteBuffer b;

        Reader(ByteBuffer b) {
            this.b = b;
        }

        int u8() {
            return b.get() & 0xff;
        }

        /** A boolean: one byte, 0 or 1; anything else is a broken frame. */
        boolean flag() {
            int f = u8();
            if (f > 1) {
                throw new ProtocolException("a flag must be 0 or 1, not " + f);
            }
            return f == 1;
        }

        int i32() {
            return b.getInt();
        }

        long i64() {
            return b.getLong();
        }

        int count() {
            int n = b.getInt();
            // every item takes at least 4 bytes, so a count beyond that cannot be honest
            if (n < 0 || n > Limits.MAX_LIST || n > b.remaining() / 4) {
                throw new ProtocolException("list count " + n + " is out of range");
            }
            return n;
        }

        byte[] bytes(int max) {
            int n = b.getInt();
            if (n < 0 || n > max || n > b.remaining()) {
                throw new ProtocolException("byte length " + n + " is out of range");
            }
            byte[] out = new byte[n];
            b.get(out);
            return out;
        }

        String text(int max) {
            int n = b.getInt();
            if (n < 0 || n > max || n > b.remaining()) {
                throw new ProtocolException("text length " + n + " is out of range");
            }
            ByteBuffer slice = b.slice(b.position(), n);
            b.position(b.position() + n);
            CharsetDecoder dec = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT);
            try {
                CharBuffer chars = dec.decode(slice);
                return chars.toString();
            } catch (CharacterCodingException e) {
                throw new ProtocolException("text is not valid UTF-8");
            }
        }

        Message.Stream stream() {
            int s = u8();
            Message.Stream[] all = Message.Stream.values();
            if (s >= all.length) {
                throw new ProtocolException("unknown stream " + s);
            }
            return all[s];
        }

        Message.ErrorCode errorCode() {
            int c = u8();
            Message.ErrorCode[] all = Message.ErrorCode.values();
            if (c >= all.length) {
                throw new ProtocolException("unknown error code " + c);
            }
            return all[c];
        }

        Message.Outcome outcome() {
            int c = u8();
            Message.Outcome[] all = Message.Outcome.values();
            if (c >= all.length) {
                throw new ProtocolException("unknown outcome " + c);
            }
            return all[c];
        }
    }

    /** Writes a frame's fields; package-private for {@link FileCodec}. */
    static final class Writer {
        private byte[] buf = new byte[64];
        private int size;

        private void ensure(int n) {
            if (size + n > buf.length) {
                buf = java.util.Arrays.copyOf(buf, Math.max(buf.length * 2, size + n));
            }
        }

        Writer u8(int v) {
            ensure(1);
            buf[size++] = (byte) v;
            return this;
        }

        Writer i32(int v) {
            ensure(4);
            ByteBuffer.wrap(buf, size, 4).putInt(v);
            size += 4;
            return this;
        }

        Writer i64(long v) {
            ensure(8);
            ByteBuffer.wrap(buf, size, 8).putLong(v);
            size += 8;
            return this;
        }

        Writer bytes(byte[] v) {
            i32(v.length);
            ensure(v.length);
            System.arraycopy(v, 0, buf, size, v.length);
            size += v.length;
            return this;
        }

        Writer text(String s) {
            return bytes(s.getBytes(StandardCharsets.UTF_8));
        }

        byte[] toByteArray() {
            return java.util.Arrays.copyOf(buf, size);
        }
    }
}
