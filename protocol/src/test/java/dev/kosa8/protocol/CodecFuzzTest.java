package dev.kosa8.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

/**
 * Frames as a hostile guest could send them: random bytes, and valid frames
 * with bytes flipped, cut or inserted. The decoder must either decode or
 * throw {@link ProtocolException} (or EOF for a cut stream); never another
 * exception, never allocate beyond the frame, never hang.
 */
class CodecFuzzTest {

    @Property(tries = 5000)
    void randomBodiesDecodeOrAreRefused(@ForAll @Size(max = 512) byte[] body) {
        decodeSafely(body);
    }

    @Property(tries = 3000)
    void mutatedValidFramesDecodeOrAreRefused(@ForAll("messages") Message m, @ForAll("mutations") List<int[]> mutations) {
        byte[] frame = Codec.encode(m);
        byte[] body = java.util.Arrays.copyOfRange(frame, Codec.HEADER, frame.length);
        for (int[] mu : mutations) {
            if (body.length == 0) {
                break;
            }
            int at = Math.floorMod(mu[1], body.length);
            switch (mu[0]) {
                case 0 -> body[at] = (byte) mu[2];
                case 1 -> body = java.util.Arrays.copyOf(body, at);
                default -> {
                    byte[] grown = new byte[body.length + 1];
                    System.arraycopy(body, 0, grown, 0, at);
                    grown[at] = (byte) mu[2];
                    System.arraycopy(body, at, grown, at + 1, body.length - at);
                    body = grown;
                }
            }
        }
        decodeSafely(body);
    }

    @Property(tries = 2000)
    void validMessagesRoundTrip(@ForAll("messages") Message m) {
        Message back = CodecTest.roundTrip(m);
        if (m instanceof Message.Data d) {
            assertThat(((Message.Data) back).bytes()).isEqualTo(d.bytes());
        } else {
            assertThat(back).isEqualTo(m);
        }
    }

    @Property(tries = 2000)
    void aStreamOfRandomBytesEndsInEofOrRefusalWithBoundedAllocation(@ForAll @Size(max = 2048) byte[] stream) {
        FrameReader r = new FrameReader(new ByteArrayInputStream(stream));
        try {
            for (int i = 0; i < 10_000; i++) {
                if (r.read() == null) {
                    return;
                }
            }
        } catch (ProtocolException | IOException expected) {
            // refused or cut short: both are fine
        }
    }

    private static void decodeSafely(byte[] body) {
        try {
            Codec.decode(ByteBuffer.wrap(body));
        } catch (ProtocolException expected) {
            // refused: fine
        }
    }

    @Provide
    Arbitrary<List<int[]>> mutations() {
        Arbitrary<int[]> one = Combinators.combine(
                Arbitraries.integers().between(0, 2),
                Arbitraries.integers(),
                Arbitraries.integers().between(0, 255)).as((a, b, c) -> new int[] {a, b, c});
        return one.list().ofMinSize(1).ofMaxSize(4);
    }

    @Provide
    Arbitrary<Message> messages() {
        Arbitrary<Integer> ch = Arbitraries.integers().between(1, Integer.MAX_VALUE);
        Arbitrary<String> text = Arbitraries.strings().ofMaxLength(40).filter(s -> s.indexOf('\0') < 0);
        Arbitrary<Message.Stream> stream = Arbitraries.of(Message.Stream.class);
        Arbitrary<Message.ExecSpec> spec = Combinators.combine(
                text.filter(s -> !s.isEmpty()).list().ofMinSize(1).ofMaxSize(5),
                Arbitraries.maps(Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(8), text).ofMaxSize(4),
                Arbitraries.of("", "/", "/workspace"),
                Arbitraries.of(true, false),
                Arbitraries.integers().between(1, 300))
                .as((argv, env, cwd, tty, size) -> new Message.ExecSpec(argv, env, cwd, "", tty, size, size));
        return Arbitraries.oneOf(
                Combinators.combine(Arbitraries.integers(), text, Arbitraries.longs()).as(Message.Hello::new),
                Arbitraries.longs().map(Message.Ping::new),
                Combinators.combine(ch, spec).as(Message.Exec::new),
                Combinators.combine(ch, stream, Arbitraries.bytes().array(byte[].class).ofMaxSize(300))
                        .as(Message.Data::new),
                Combinators.combine(ch, stream).as(Message.Eof::new),
                Combinators.combine(ch, stream, Arbitraries.integers().between(1, Limits.INITIAL_WINDOW))
                        .as(Message.Credit::new),
                Combinators.combine(ch, Arbitraries.integers().between(1, 64)).as(Message.Signal::new),
                Combinators.combine(ch, Arbitraries.integers(), Arbitraries.integers()).as(Message.Exited::new),
                Combinators.combine(ch, Arbitraries.of(Message.ErrorCode.class), text).as(Message.Failed::new),
                Combinators.combine(ch, text.map(s -> "/" + s), Arbitraries.integers().between(0, 07777))
                        .as((c, path, mode) -> new Message.PutFile(c, path, mode)),
                Combinators.combine(ch, text.map(s -> "/" + s), Arbitraries.integers().between(0, 07777), user())
                        .as(Message.PutFile::new),
                Combinators.combine(ch, user(), fileOps()).as(Message.FileRequest::new),
                Combinators.combine(ch, stats().list().ofMaxSize(6)).as(Message.FileEntries::new),
                Combinators.combine(ch, events().list().ofMinSize(1).ofMaxSize(6)).as(Message.WatchEvents::new),
                Combinators.combine(ch, Arbitraries.longs().greaterOrEqual(0), Arbitraries.integers())
                        .as(Message.FileInfo::new),
                Combinators.combine(ch, text.map(s -> "/" + s), Arbitraries.integers().between(8192, 16 << 20),
                        Arbitraries.of(false, true), Arbitraries.of(false, true), Arbitraries.of(false, true))
                        .as(Message.MountWorkspace::new),
                Combinators.combine(ch, Arbitraries.integers().between(1, 600_000)).as(Message.Freeze::new),
                Combinators.combine(ch, Arbitraries.longs().greaterOrEqual(0),
                        Arbitraries.bytes().array(byte[].class).ofMaxSize(512)).as(Message.Thaw::new),
                Combinators.combine(ch, Arbitraries.integers().between(1, 65535)).as(Message.NetOpen::new),
                ch.map(Message.NetReset::new),
                Arbitraries.just(new Message.NetWindowReady()),
                Combinators.combine(ch, Arbitraries.integers().between(0, NetLink.SLOTS - 1),
                        Arbitraries.integers().between(1, NetLink.SLOT_DATA), Arbitraries.longs())
                        .as(Message.NetWindowData::new),
                Combinators.combine(Arbitraries.integers().between(0, NetLink.SLOTS - 1), Arbitraries.longs())
                        .as(Message.NetWindowReturn::new),
                Combinators.combine(ch, Arbitraries.integers().between(1, 65535)).as(Message.Connect::new),
                Combinators.combine(Arbitraries.longs().greaterOrEqual(1),
                        text.filter(s -> s.codePoints().noneMatch(Character::isISOControl))).as(Message.Ask::new),
                Combinators.combine(Arbitraries.longs().greaterOrEqual(1), Arbitraries.of(Message.Outcome.class), text)
                        .as(Message.Answer::new));
    }

    /** Frames of the file messages alone, mutated: each of their decoders (ops, stats, events) gets its own share. */
    @Property(tries = 3000)
    void mutatedFileMessagesDecodeOrAreRefused(@ForAll("fileMessages") Message m,
                                               @ForAll("mutations") List<int[]> mutations) {
        mutatedValidFramesDecodeOrAreRefused(m, mutations);
    }

    @Property(tries = 1000)
    void fileMessagesRoundTrip(@ForAll("fileMessages") Message m) {
        assertThat(CodecTest.roundTrip(m)).isEqualTo(m);
    }

    @Provide
    Arbitrary<Message> fileMessages() {
        Arbitrary<Integer> ch = Arbitraries.integers().between(1, Integer.MAX_VALUE);
        return Arbitraries.oneOf(
                Combinators.combine(ch, user(), fileOps()).as(Message.FileRequest::new),
                Combinators.combine(ch, stats().list().ofMaxSize(6)).as(Message.FileEntries::new),
                Combinators.combine(ch, events().list().ofMinSize(1).ofMaxSize(6)).as(Message.WatchEvents::new),
                Combinators.combine(ch, path(), Arbitraries.integers().between(0, 07777), user())
                        .as(Message.PutFile::new));
    }

    private static Arbitrary<String> path() {
        return Arbitraries.strings().ofMaxLength(30).filter(s -> s.indexOf('\0') < 0).map(s -> "/" + s);
    }

    private static Arbitrary<String> user() {
        return Arbitraries.oneOf(Arbitraries.just(""), Arbitraries.strings().alpha().numeric().ofMinLength(1)
                .ofMaxLength(12));
    }

    private static Arbitrary<FileOp> fileOps() {
        Arbitrary<Boolean> flag = Arbitraries.of(false, true);
        return Arbitraries.oneOf(
                Combinators.combine(path(), flag).as(FileOp.Stat::new),
                Combinators.combine(path(), Arbitraries.integers().between(1, FileOp.MAX_DEPTH),
                        Arbitraries.integers().between(1, FileOp.MAX_LIST_ENTRIES)).as(FileOp.ListDir::new),
                Combinators.combine(path(), Arbitraries.integers().between(0, 07777), flag).as(FileOp.MakeDir::new),
                Combinators.combine(path(), flag).as(FileOp.Remove::new),
                Combinators.combine(path(), path(), flag).as(FileOp.Rename::new),
                Combinators.combine(path(), flag).as(FileOp.Watch::new));
    }

    private static Arbitrary<FileStat> stats() {
        Arbitrary<String> name = Arbitraries.strings().alpha().ofMaxLength(10);
        return Combinators.combine(path(), Arbitraries.of(FileStat.Type.class), Arbitraries.longs().greaterOrEqual(0),
                Arbitraries.integers().between(0, 07777), Arbitraries.integers(), Arbitraries.integers(), name,
                Arbitraries.longs()).as((p, t, size, mode, uid, gid, owner, mtime) ->
                new FileStat(p, t, size, mode, uid, gid, owner, owner.toUpperCase(), mtime,
                        t == FileStat.Type.SYMLINK ? owner : ""));
    }

    private static Arbitrary<WatchEvent> events() {
        return Combinators.combine(Arbitraries.of(WatchEvent.Kind.class), path()).as(WatchEvent::new);
    }

}
