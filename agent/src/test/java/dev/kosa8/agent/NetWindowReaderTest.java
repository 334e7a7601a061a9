package dev.kosa8.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.NetLink;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The network window in the guest, without a guest: a file stands for the window's disk (in the build's own
 * directory, whose file system takes O_DIRECT; tmpfs would not), this test plays the host writing slots and
 * sending NetWindowData on the port, and a plain socket plays the guest's program.
 */
class NetWindowReaderTest {
    private Path file;
    private int fd = -1;
    private NetRelayTest.HostSide host;
    private NetRelay relay;
    private Map<Integer, InetSocketAddress> ports;
    private Socket guest;
    private NetWindowReader window;

    @BeforeEach
    void start() throws Exception {
        Files.createDirectories(Path.of("target"));
        file = Files.createTempFile(Path.of("target"), "net-window", ".disk");
        try (FileChannel f = FileChannel.open(file, StandardOpenOption.WRITE)) {
            f.write(ByteBuffer.allocate(1), NetLink.WINDOW_BYTES - 1);
        }
        fd = Posix.open(file.toString(), Posix.O_RDONLY | Posix.O_DIRECT);
        host = new NetRelayTest.HostSide();
        window = new NetWindowReader(fd, Arena.global());
        relay = NetRelayTest.relayServing(host, window);
        ports = relay.bound();
    }

    @AfterEach
    void close() throws IOException {
        if (guest != null) {
            guest.close();
        }
        if (fd >= 0) {
            Posix.close(fd);
        }
        Files.deleteIfExists(file);
    }

    /** The host's Hello; the agent answers and says it reads the window. Then a guest connects: its channel. */
    int sessionAndStream() throws Exception {
        host.send(new Message.Hello(Limits.VERSION, "test-host", 0));
        assertThat(host.next()).isInstanceOf(Message.Hello.class);
        assertThat(host.next()).as("right after its answer").isEqualTo(new Message.NetWindowReady());
        guest = new Socket();
        guest.connect(ports.get(80), 5000);
        guest.setSoTimeout(10_000);
        return host.next(Message.NetOpen.class).channel();
    }

    /** Writes a slot as the daemon does: its header (serial, count, channel) and its bytes. */
    void writeSlot(int slot, long serial, int channel, byte[] data) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(NetLink.SLOT_HEADER + data.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(serial).putInt(data.length).putInt(channel).put(data).flip();
        try (FileChannel f = FileChannel.open(file, StandardOpenOption.WRITE)) {
            f.write(b, (long) slot * NetLink.SLOT_SIZE);
        }
    }

    static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 13 + seed);
        }
        return b;
    }

    @Test
    void aSlotIsReadGivenBackAndItsBytesReachTheGuestInOrderWithThePortsData() throws Exception {
        int ch = sessionAndStream();
        byte[] first = bytes(NetLink.OPEN_WINDOW, 1); // a stream's window opens this small
        writeSlot(5, 77, ch, first);
        host.send(new Message.NetWindowData(ch, 5, first.length, 77));
        assertThat(guest.getInputStream().readNBytes(first.length)).isEqualTo(first);
        assertThat(host.next()).isEqualTo(new Message.NetWindowReturn(5, 77));
        assertThat(host.next(Message.Credit.class).bytes()).as("written, and the window grown")
                .isGreaterThanOrEqualTo(first.length + NetLink.SLOT_DATA);
        byte[] last = bytes(NetLink.SLOT_DATA - 1000, 2);
        writeSlot(NetLink.SLOTS - 1, 78, ch, last);
        host.send(new Message.Data(ch, Message.Stream.STDIN, "between".getBytes()));
        host.send(new Message.NetWindowData(ch, NetLink.SLOTS - 1, last.length, 78));
        assertThat(new String(guest.getInputStream().readNBytes(7))).isEqualTo("between");
        assertThat(guest.getInputStream().readNBytes(last.length)).isEqualTo(last);
        Message m;
        while ((m = host.next()) instanceof Message.Credit) {
            // the port's bytes credited
        }
        assertThat(m).isEqualTo(new Message.NetWindowReturn(NetLink.SLOTS - 1, 78));
        NetRelayTest.waitFor(() -> window.freeBuffers() == window.buffersMade(),
                "the reader's buffers back once their bytes are in the guest's socket");
    }

    /**
     * A slot whose header is not the message's (a machine restored from a checkpoint reading a slot that a later
     * session wrote): its bytes never reach the program, whose connection is reset, and the host is told.
     */
    @Test
    void aSlotWrittenForAnotherMessageResetsTheStreamAndNothingOfItReachesTheGuest() throws Exception {
        int ch = sessionAndStream();
        writeSlot(3, 1000, ch, bytes(NetLink.OPEN_WINDOW, 3));
        host.send(new Message.NetWindowData(ch, 3, NetLink.OPEN_WINDOW, 999));
        assertThatThrownBy(() -> guest.getInputStream().read()).isInstanceOf(SocketException.class)
                .hasMessageContaining("reset");
        boolean reset = false;
        boolean returned = false;
        while (!(reset && returned)) {
            Message m = host.next();
            reset |= m.equals(new Message.NetReset(ch));
            returned |= m.equals(new Message.NetWindowReturn(3, 999));
        }
        assertThat(window.freeBuffers()).as("the buffer it was read into is back").isEqualTo(window.buffersMade());
    }

    /**
     * A stream whose pieces wait (its program does not read) holds at most {@link NetWindowReader#PER_STREAM} of the
     * reader's buffers, and all streams together at most {@link NetWindowReader#BUFFERS}; further pieces are copied
     * out, and a buffer given back is lent again. (Read directly: a loopback socket takes a whole window before its
     * writer waits, so through the relay no piece would wait here.)
     */
    @Test
    void aStreamHoldsAtMostItsShareOfTheBuffersAndAllOfThemAtMostEvery() throws Exception {
        java.util.List<NetStream.Down> held = new java.util.ArrayList<>();
        int slot = 0;
        for (int ch = 1; ch <= 3; ch++) {
            for (int i = 0; i < NetWindowReader.PER_STREAM + 2; i++, slot = (slot + 1) % NetLink.SLOTS) {
                byte[] b = bytes(NetLink.OPEN_WINDOW, slot);
                writeSlot(slot, 1000 + slot, ch, b);
                NetStream.Down d = window.read(new Message.NetWindowData(ch, slot, b.length, 1000 + slot));
                assertThat(d).isNotNull();
                byte[] got = new byte[b.length];
                d.bytes().duplicate().get(got);
                assertThat(got).as("a piece's bytes, pooled or copied").isEqualTo(b);
                held.add(d);
            }
            assertThat(window.heldBy(ch)).as("stream %d's share", ch)
                    .isEqualTo(Math.min(NetWindowReader.PER_STREAM,
                            NetWindowReader.BUFFERS - (ch - 1) * NetWindowReader.PER_STREAM));
        }
        assertThat(window.buffersMade()).isEqualTo(NetWindowReader.BUFFERS);
        assertThat(held.stream().filter(d -> d.release() != null)).hasSize(NetWindowReader.BUFFERS);
        held.getFirst().done();
        assertThat(window.heldBy(1)).isEqualTo(NetWindowReader.PER_STREAM - 1);
        writeSlot(0, 5000, 1, bytes(NetLink.OPEN_WINDOW, 9));
        NetStream.Down again = window.read(new Message.NetWindowData(1, 0, NetLink.OPEN_WINDOW, 5000));
        assertThat(again.release()).as("the buffer given back is lent again").isNotNull();
        again.done();
        for (NetStream.Down d : held.subList(1, held.size())) {
            d.done();
        }
        assertThat(window.freeBuffers()).isEqualTo(NetWindowReader.BUFFERS);
    }

    /**
     * More pieces than the reader has buffers, for a program that reads late: whether a piece waited in one of the
     * buffers or was copied out (with none free), all of it reaches the program in order, and every buffer comes
     * back; pieces held for a stream that is reset give theirs back too.
     */
    @Test
    void morePiecesThanBuffersArriveInOrderAndEveryBufferComesBack() throws Exception {
        int ch = sessionAndStream();
        int piece = NetLink.OPEN_WINDOW;
        writeSlot(0, 1, ch, bytes(piece, 0));
        host.send(new Message.NetWindowData(ch, 0, piece, 1));
        assertThat(guest.getInputStream().readNBytes(piece)).isEqualTo(bytes(piece, 0));
        // the window is grown now: the host sends more pieces than the reader has buffers, and the program waits
        int pieces = NetWindowReader.BUFFERS + 4;
        java.io.ByteArrayOutputStream sent = new java.io.ByteArrayOutputStream();
        for (int i = 1; i <= pieces; i++) {
            byte[] b = bytes(piece, i);
            writeSlot(i, 100 + i, ch, b);
            host.send(new Message.NetWindowData(ch, i, piece, 100 + i));
            sent.write(b);
            Message m;
            while (!((m = host.next()) instanceof Message.NetWindowReturn)) {
                // credits of what went into the socket
            }
        }
        assertThat(guest.getInputStream().readNBytes(sent.size())).isEqualTo(sent.toByteArray());
        NetRelayTest.waitFor(() -> window.freeBuffers() == window.buffersMade(), "every buffer back once read");
        // pieces held for a program that does not read go back when its stream is reset
        for (int i = 0; i < 4; i++) {
            writeSlot(i, 200 + i, ch, bytes(piece, i));
            host.send(new Message.NetWindowData(ch, i, piece, 200 + i));
        }
        host.send(new Message.NetReset(ch));
        NetRelayTest.waitFor(() -> window.freeBuffers() == window.buffersMade(), "every buffer back after a reset");
    }
}
