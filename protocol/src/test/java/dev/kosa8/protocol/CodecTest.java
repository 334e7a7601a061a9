package dev.kosa8.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CodecTest {

    static Message roundTrip(Message m) {
        byte[] frame = Codec.encode(m);
        assertThat(ByteBuffer.wrap(frame).getInt()).isEqualTo(frame.length - Codec.HEADER);
        return Codec.decode(ByteBuffer.wrap(frame, Codec.HEADER, frame.length - Codec.HEADER));
    }

    /**
     * The network link's agent credits what it wrote and what it grows the window by in one Credit: at most a whole
     * grown window, which a Credit must be able to carry, and a window slot's worth fits in a window.
     */
    @Test
    void aCreditCarriesAWholeNetworkWindowAndAWindowHoldsSlots() {
        assertThat(NetLink.DOWN_WINDOW).isLessThanOrEqualTo(Limits.INITIAL_WINDOW);
        assertThat(roundTrip(new Message.Credit(1, Message.Stream.STDIN, NetLink.DOWN_WINDOW)))
                .isEqualTo(new Message.Credit(1, Message.Stream.STDIN, NetLink.DOWN_WINDOW));
        assertThat(NetLink.SLOT_DATA).isLessThanOrEqualTo(NetLink.DOWN_WINDOW / 2);
    }

    @Test
    void everyMessageTypeSurvivesARoundTrip() {
        var spec = new Message.ExecSpec(List.of("sh", "-c", "echo ü"), Map.of("A", "1", "B", ""), "/tmp", "1000",
                true, 24, 80);
        List<Message> all = List.of(
                new Message.Hello(1, "kosa8-agent 0.1", 1234),
                new Message.Ping(-7), new Message.Pong(42),
                new Message.Exec(3, spec),
                new Message.Started(3, 99),
                new Message.Eof(3, Message.Stream.STDIN),
                new Message.Credit(3, Message.Stream.STDOUT, 65536),
                new Message.Signal(3, 2),
                new Message.Resize(3, 50, 132),
                new Message.Exited(3, 130, 2),
                new Message.Failed(3, Message.ErrorCode.NOT_FOUND, "no such program: frob"),
                new Message.PutFile(4, "/workspace/a b", 0644),
                new Message.GetFile(5, "/etc/hostname"),
                new Message.FileInfo(5, 1L << 40, 0755),
                new Message.MountWorkspace(6, "/home/ann/project x", 1 << 20, false, false, false),
                new Message.MountWorkspace(6, "", 512 << 10, true, false, true),
                new Message.MountWorkspace(6, "/p", 1 << 20, false, true, false),
                new Message.MountWorkspace(6, "/p", 1 << 20, true, true, true),
                new Message.Freeze(7, 30_000),
                new Message.Thaw(8, 1_796_000_000_000L, new byte[] {1, 2, 3, (byte) 0xff}),
                new Message.Thaw(9, 0, new byte[0]),
                new Message.NetOpen(10, 443),
                new Message.NetOpen(Integer.MAX_VALUE, 65535),
                new Message.NetReset(10),
                new Message.NetWindowReady(),
                new Message.NetWindowData(10, 0, 1, 0), new Message.NetWindowData(Integer.MAX_VALUE,
                        NetLink.SLOTS - 1, NetLink.SLOT_DATA, Long.MIN_VALUE),
                new Message.NetWindowReturn(0, -1), new Message.NetWindowReturn(NetLink.SLOTS - 1, Long.MAX_VALUE),
                new Message.Connect(7, 8000),
                new Message.Connect(Integer.MAX_VALUE, 65535),
                new Message.Ask(1, "tool: Bash"), new Message.Ask(Long.MAX_VALUE, ""),
                new Message.Answer(1, Message.Outcome.TAKEN, "turn 3 c20261204T201500"),
                new Message.Answer(0, Message.Outcome.FORGOTTEN, ""),
                new Message.PutFile(4, "/home/user/a", 0600, "user"),
                new Message.FileRequest(11, "", new FileOp.Stat("/etc/passwd", true)),
                new Message.FileRequest(11, "1000", new FileOp.ListDir("/", 3, 500)),
                new Message.FileRequest(11, "user", new FileOp.MakeDir("/a/b/c", 0755, true)),
                new Message.FileRequest(11, "", new FileOp.Remove("/tmp/x", true)),
                new Message.FileRequest(11, "", new FileOp.Rename("/a", "/b ü", false)),
                new Message.FileRequest(11, "", new FileOp.Watch("/workspace", true)),
                new Message.FileEntries(11, List.of()),
                new Message.FileEntries(11, List.of(new FileStat("/bin", FileStat.Type.SYMLINK, 7, 0777, 0, 0, "root",
                        "root", 1_796_000_000_000L, "usr/bin"), new FileStat("/tmp", FileStat.Type.DIRECTORY, 4096,
                        01777, 0, 0, "root", "root", 0, ""))),
                new Message.WatchEvents(11, List.of(new WatchEvent(WatchEvent.Kind.CREATE, "/w/a"),
                        new WatchEvent(WatchEvent.Kind.OVERFLOW, "/w"))),
                new Message.Failed(11, Message.ErrorCode.LIMIT, "too many watches"));
        for (Message m : all) {
            assertThat(roundTrip(m)).isEqualTo(m);
        }
        var data = new Message.Data(3, Message.Stream.STDERR, new byte[] {0, 1, 2, (byte) 255});
        var back = (Message.Data) roundTrip(data);
        assertThat(back.bytes()).containsExactly(0, 1, 2, 255);
        assertThat(back.stream()).isEqualTo(Message.Stream.STDERR);
    }

    @Test
    void anAskCarriesOneShortLineAndAnAnswerNamesAnAsk() {
        assertThatThrownBy(() -> new Message.Ask(0, "x")).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new Message.Ask(1, "two\nlines")).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("control character");
        assertThatThrownBy(() -> new Message.Ask(1, "x".repeat(Limits.MAX_LABEL + 1)))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("longer than");
        assertThatThrownBy(() -> new Message.Answer(0, Message.Outcome.TAKEN, ""))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("does not name an ask");
        // on the wire too: a label longer than the limit is refused before a string is made of it
        ByteBuffer b = ByteBuffer.allocate(64);
        b.put((byte) 21).putLong(1).putInt(Limits.MAX_LABEL + 1).flip();
        assertThatThrownBy(() -> Codec.decode(b)).isInstanceOf(ProtocolException.class);
    }

    @Test
    void fileModesConvertBothWays() {
        assertThat(FileMode.permissions(0754)).hasSize(6);
        assertThat(FileMode.of(FileMode.permissions(0754))).isEqualTo(0754);
        assertThat(FileMode.of(FileMode.permissions(07777))).isEqualTo(0777);
    }

    @Test
    void fileMessagesRefuseWhatTheirRecordsRefuse() {
        assertThatThrownBy(() -> new FileOp.Stat("relative", false)).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new FileOp.ListDir("/", 0, 1)).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new FileOp.ListDir("/", FileOp.MAX_DEPTH + 1, 1)).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new FileOp.ListDir("/", 1, FileOp.MAX_LIST_ENTRIES + 1))
                .isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new FileOp.MakeDir("/a", 010000, false)).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new FileOp.Rename("/a", "/b\0c", false)).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new Message.FileRequest(1, "a:b", new FileOp.Stat("/", false)))
                .isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new Message.WatchEvents(1, List.of())).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new FileStat("/x", FileStat.Type.FILE, -1, 0, 0, 0, "", "", 0, ""))
                .isInstanceOf(ProtocolException.class);
        // an unknown operation, type or event kind byte is refused by the decoder
        byte[] frame = Codec.encode(new Message.FileRequest(1, "", new FileOp.Stat("/", false)));
        frame[Codec.HEADER + 1 + 4 + 4] = 99;
        assertThatThrownBy(() -> Codec.decode(java.nio.ByteBuffer.wrap(frame, Codec.HEADER,
                frame.length - Codec.HEADER))).isInstanceOf(ProtocolException.class).hasMessageContaining("file operation");
        byte[] events = Codec.encode(new Message.WatchEvents(1, List.of(new WatchEvent(WatchEvent.Kind.CREATE, "/a"))));
        events[Codec.HEADER + 1 + 4 + 4] = 99;
        assertThatThrownBy(() -> Codec.decode(java.nio.ByteBuffer.wrap(events, Codec.HEADER,
                events.length - Codec.HEADER))).isInstanceOf(ProtocolException.class).hasMessageContaining("Kind");
    }

    @Test
    void refusesTrailingBytes() {
        byte[] frame = Codec.encode(new Message.Ping(1));
        byte[] longer = Arrays.copyOf(frame, frame.length + 1);
        assertThatThrownBy(() -> Codec.decode(ByteBuffer.wrap(longer, 4, longer.length - 4)))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("trailing");
    }

    @Test
    void refusesAListCountLargerThanTheFrameCouldHold() {
        ByteBuffer b = ByteBuffer.allocate(32);
        b.put((byte) 4).putInt(1).putInt(1_000_000).flip();
        assertThatThrownBy(() -> Codec.decode(b)).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("list count");
    }

    @Test
    void refusesMalformedUtf8() {
        ByteBuffer b = ByteBuffer.allocate(32);
        b.put((byte) 14).putInt(1).putInt(2).put((byte) 0xc3).put((byte) 0x28).flip();
        assertThatThrownBy(() -> Codec.decode(b)).isInstanceOf(ProtocolException.class).hasMessageContaining("UTF-8");
    }

    @Test
    void refusesNulInPathsAndArgv() {
        assertThatThrownBy(() -> new Message.GetFile(1, "/etc/passwd\0x")).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> Message.ExecSpec.of("a\0b")).isInstanceOf(ProtocolException.class);
    }

    @Test
    void refusesControlChannelForData() {
        assertThatThrownBy(() -> new Message.Data(0, Message.Stream.STDOUT, new byte[1]))
                .isInstanceOf(ProtocolException.class);
    }

    @Test
    void readerRefusesAnOversizedLengthBeforeAllocating() {
        byte[] frame = ByteBuffer.allocate(4).putInt(Integer.MAX_VALUE).array();
        var reader = new FrameReader(new ByteArrayInputStream(frame));
        assertThatThrownBy(reader::read).isInstanceOf(ProtocolException.class).hasMessageContaining("out of range");
    }

    @Test
    void readerReportsCleanEndAndTruncatedFrames() throws Exception {
        assertThat(new FrameReader(new ByteArrayInputStream(new byte[0])).read()).isNull();
        byte[] frame = Codec.encode(new Message.Ping(1));
        var truncated = new FrameReader(new ByteArrayInputStream(Arrays.copyOf(frame, frame.length - 1)));
        assertThatThrownBy(truncated::read).isInstanceOf(EOFException.class);
    }

    @Test
    void sendWindowBlocksAtZeroAndResumesOnCredit() throws Exception {
        SendWindow w = new SendWindow();
        assertThat(w.acquire(Limits.INITIAL_WINDOW + 5)).isEqualTo(Limits.INITIAL_WINDOW);
        Thread t = Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return;
            }
            w.credit(10);
        });
        assertThat(w.acquire(100)).isEqualTo(10);
        t.join();
        w.credit(Limits.INITIAL_WINDOW);
        assertThatThrownBy(() -> w.credit(1)).isInstanceOf(ProtocolException.class);
        w.credit(0); // what an empty Data frame is credited back with: nothing
        assertThatThrownBy(() -> w.credit(-1)).isInstanceOf(ProtocolException.class);
        assertThat(roundTrip(new Message.Credit(1, Message.Stream.STDIN, 0)))
                .isEqualTo(new Message.Credit(1, Message.Stream.STDIN, 0));
        w.close();
        assertThat(w.acquire(1)).isEqualTo(-1);
    }

    /**
     * The agent grows a stream's window towards the guest with one credit of what it wrote and what it grants:
     * at most the whole of {@link NetLink#DOWN_WINDOW}, which must stay a credit the protocol carries.
     */
    @Test
    void theLargestCreditTheAgentGrantsIsOneTheProtocolCarries() {
        Message.Credit most = new Message.Credit(1, Message.Stream.STDIN, NetLink.DOWN_WINDOW);
        assertThat(roundTrip(most)).isEqualTo(most);
    }

    @Test
    void aNetworkStreamNamesOnlyAPortAndItsChannelIsADataChannel() {
        for (int port : new int[] {0, -1, 65536}) {
            assertThatThrownBy(() -> new Message.NetOpen(1, port)).isInstanceOf(ProtocolException.class)
                    .hasMessageContaining("port " + port);
        }
        assertThatThrownBy(() -> new Message.NetOpen(0, 80)).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new Message.NetReset(-3)).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new Message.NetWindowData(1, NetLink.SLOTS, 1, 0))
                .isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new Message.NetWindowData(1, -1, 1, 0)).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new Message.NetWindowData(1, 0, 0, 0)).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new Message.NetWindowData(1, 0, NetLink.SLOT_DATA + 1, 0))
                .isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new Message.NetWindowData(0, 0, 1, 0)).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new Message.NetWindowReturn(NetLink.SLOTS, 0)).isInstanceOf(ProtocolException.class);
        assertThat(NetLink.SLOT_SIZE % 4096).isZero();
        assertThat(NetLink.SLOT_SIZE).isGreaterThanOrEqualTo(NetLink.SLOT_HEADER + NetLink.SLOT_DATA);
        assertThatThrownBy(() -> new Message.Connect(1, 0)).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new Message.Connect(1, 65536)).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new Message.Connect(0, 80)).isInstanceOf(ProtocolException.class);
        // a port beyond 16 bits on the wire is refused by the decoder as by the constructor
        ByteBuffer b = ByteBuffer.allocate(9);
        b.put((byte) 19).putInt(1).putInt(70_000).flip();
        assertThatThrownBy(() -> Codec.decode(b)).isInstanceOf(ProtocolException.class).hasMessageContaining("port");
        // a data chunk of the link fits the guest driver's 32 KiB write with its frame's header
        assertThat(Codec.encode(new Message.Data(Integer.MAX_VALUE, Message.Stream.STDOUT, new byte[NetLink.CHUNK])))
                .hasSizeLessThanOrEqualTo(32 * 1024);
    }

    @Test
    void aNetworkStreamsWindowsAreItsOwnSize() throws Exception {
        SendWindow w = new SendWindow(NetLink.WINDOW);
        assertThat(w.acquire(Limits.INITIAL_WINDOW)).isEqualTo(NetLink.WINDOW);
        w.credit(NetLink.WINDOW);
        assertThatThrownBy(() -> w.credit(1)).isInstanceOf(ProtocolException.class);
        ReceiveWindow r = new ReceiveWindow(NetLink.WINDOW);
        r.received(NetLink.WINDOW);
        assertThatThrownBy(() -> r.received(1)).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("window of " + NetLink.WINDOW);
        assertThatThrownBy(() -> new SendWindow(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ReceiveWindow(Limits.INITIAL_WINDOW + 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void receiveWindowRefusesAPeerThatIgnoresCredit() {
        ReceiveWindow r = new ReceiveWindow();
        r.received(Limits.INITIAL_WINDOW);
        r.consumed(100);
        r.received(100);
        assertThatThrownBy(() -> r.received(1)).isInstanceOf(ProtocolException.class);
    }
}
