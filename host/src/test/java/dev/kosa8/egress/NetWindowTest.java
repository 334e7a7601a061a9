package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.NetLink;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The network window's slots on the daemon's side: what is written where, lent and given back. */
class NetWindowTest {
    @TempDir
    Path dir;
    final List<String> logged = new ArrayList<>();

    NetWindow window() throws IOException {
        Path file = dir.resolve("net.window");
        try (FileChannel f = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            f.write(ByteBuffer.allocate(1), NetLink.WINDOW_BYTES - 1);
        }
        return NetWindow.open(file, logged::add);
    }

    static ByteBuf bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 7 + seed);
        }
        return Unpooled.wrappedBuffer(b);
    }

    ByteBuffer slot(int slot) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(NetLink.SLOT_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        try (FileChannel f = FileChannel.open(dir.resolve("net.window"))) {
            f.read(b, (long) slot * NetLink.SLOT_SIZE);
        }
        return b.flip();
    }

    @Test
    void aPieceIsWrittenBehindItsHeaderAndTheReaderMovesPastIt() throws IOException {
        try (NetWindow w = window()) {
            w.enable();
            ByteBuf data = bytes(NetLink.SLOT_DATA + 100, 3);
            Message.NetWindowData d = w.lend(42, data, NetLink.SLOT_DATA);
            assertThat(d).isNotNull();
            assertThat(d.channel()).isEqualTo(42);
            assertThat(d.count()).isEqualTo(NetLink.SLOT_DATA);
            assertThat(data.readableBytes()).isEqualTo(100);
            ByteBuffer s = slot(d.slot());
            assertThat(s.getLong(0)).isEqualTo(d.serial());
            assertThat(s.getInt(8)).isEqualTo(NetLink.SLOT_DATA);
            assertThat(s.getInt(12)).isEqualTo(42);
            for (int i = 0; i < NetLink.SLOT_DATA; i++) {
                assertThat(s.get(NetLink.SLOT_HEADER + i)).isEqualTo((byte) (i * 7 + 3));
            }
            assertThat(w.lentOut()).isEqualTo(1);
        }
    }

    @Test
    void nothingIsLentBeforeTheAgentIsReadyNorSmallPiecesNorPastTheLastSlot() throws IOException {
        try (NetWindow w = window()) {
            assertThat(w.takes(NetLink.SLOT_DATA)).as("not before the agent says it reads the window").isFalse();
            assertThat(w.lend(1, bytes(NetWindow.THRESHOLD, 0), NetWindow.THRESHOLD)).isNull();
            w.enable();
            assertThat(w.takes(NetWindow.THRESHOLD - 1)).as("small pieces go through the port").isFalse();
            assertThat(w.takes(NetWindow.THRESHOLD)).isTrue();
            Set<Integer> slots = new HashSet<>();
            Set<Long> serials = new HashSet<>();
            for (int i = 0; i < NetLink.SLOTS; i++) {
                ByteBuf b = bytes(NetWindow.THRESHOLD, i);
                Message.NetWindowData d = w.lend(1, b, NetWindow.THRESHOLD);
                slots.add(d.slot());
                serials.add(d.serial());
            }
            assertThat(slots).hasSize(NetLink.SLOTS);
            assertThat(serials).hasSize(NetLink.SLOTS);
            assertThat(w.takes(NetWindow.THRESHOLD)).isFalse();
            ByteBuf more = bytes(NetWindow.THRESHOLD, 9);
            assertThat(w.lend(1, more, NetWindow.THRESHOLD)).as("no slot free").isNull();
            assertThat(more.readableBytes()).as("and the bytes stay for the port").isEqualTo(NetWindow.THRESHOLD);
        }
    }

    @Test
    void aSlotComesBackOnlyUnderItsOwnSerialAndOnlyOnce() throws IOException {
        try (NetWindow w = window()) {
            w.enable();
            Message.NetWindowData d = w.lend(1, bytes(NetWindow.THRESHOLD, 0), NetWindow.THRESHOLD);
            assertThat(w.giveBack(new Message.NetWindowReturn(d.slot(), d.serial() + 1))).isFalse();
            assertThat(w.giveBack(new Message.NetWindowReturn((d.slot() + 1) % NetLink.SLOTS, d.serial())))
                    .isFalse();
            assertThat(w.lentOut()).isEqualTo(1);
            assertThat(w.giveBack(new Message.NetWindowReturn(d.slot(), d.serial()))).isTrue();
            assertThat(w.giveBack(new Message.NetWindowReturn(d.slot(), d.serial()))).as("not twice").isFalse();
            assertThat(w.lentOut()).isZero();
        }
    }

    /**
     * A new session frees every slot, turns the window off until the agent is ready again, and lends under serials
     * that the session before did not use: a restored machine's agent reading a slot of its own session finds
     * another serial in the header.
     */
    @Test
    void aNewSessionStartsAfreshUnderOtherSerials() throws IOException {
        try (NetWindow w = window()) {
            w.enable();
            List<Long> before = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                before.add(w.lend(1, bytes(NetWindow.THRESHOLD, i), NetWindow.THRESHOLD).serial());
            }
            w.newSession();
            assertThat(w.lentOut()).isZero();
            assertThat(w.enabled()).isFalse();
            w.enable();
            Message.NetWindowData d = w.lend(1, bytes(NetWindow.THRESHOLD, 0), NetWindow.THRESHOLD);
            assertThat(d.slot()).isZero();
            assertThat(before).doesNotContain(d.serial());
        }
    }

    /** A write the file does not take turns the window off for the session, said once; the piece stays for the port. */
    @Test
    void aFailedWriteTurnsTheWindowOffForTheSessionAndSaysSoOnce() throws IOException {
        NetWindow w = window();
        w.enable();
        w.close(); // every write fails from here on
        ByteBuf data = bytes(NetWindow.THRESHOLD, 0);
        assertThat(w.lend(1, data, NetWindow.THRESHOLD)).isNull();
        assertThat(data.readableBytes()).as("the piece stays for the port").isEqualTo(NetWindow.THRESHOLD);
        assertThat(w.takes(NetWindow.THRESHOLD)).as("off for the session").isFalse();
        assertThat(w.lend(1, data, NetWindow.THRESHOLD)).isNull();
        assertThat(logged).as("said once").hasSize(1).allSatisfy(l -> assertThat(l)
                .startsWith("cannot write the network window").endsWith("until the link's next session"));
    }

    @Test
    void aWindowFileTooSmallIsRefused() throws IOException {
        Path file = dir.resolve("small.window");
        try (FileChannel f = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            f.write(ByteBuffer.allocate(1), NetLink.SLOT_SIZE);
        }
        assertThatThrownBy(() -> NetWindow.open(file, logged::add)).isInstanceOf(IOException.class)
                .hasMessageContaining("not a plain file");
        assertThat(NetWindow.open(null, logged::add)).isNull();
    }

    /** The window's file lies where QEMU's jail may write: a link in its place, or a FIFO, is never opened. */
    @Test
    void aLinkOrAFifoInTheWindowsPlaceIsRefused() throws Exception {
        window().close();
        Path link = dir.resolve("link.window");
        java.nio.file.Files.createSymbolicLink(link, dir.resolve("net.window"));
        assertThatThrownBy(() -> NetWindow.open(link, logged::add)).isInstanceOf(IOException.class)
                .hasMessageContaining("not a plain file");
        Path fifo = dir.resolve("fifo.window");
        assertThat(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor()).isZero();
        assertThatThrownBy(() -> NetWindow.open(fifo, logged::add)).isInstanceOf(IOException.class)
                .hasMessageContaining("not a plain file");
    }
}
