package dev.kosa8.workspace;

import static dev.kosa8.workspace.P9TestClient.O_RDONLY;
import static dev.kosa8.workspace.P9TestClient.ROOT;
import static dev.kosa8.workspace.P9TestClient.data;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.Ws9p;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The read window ({@link ReadWindow}) as the server uses it: which reads go through it, that a
 * slot is written again only once given back under its serial, that a checkpoint's instant waits
 * for every slot, and what a new mount or a restore does to it. The client plays the guest's
 * relay (it reads the window file as the relay reads the disk).
 */
class ReadWindowTest {
    private static final int MIB = 1 << 20;

    @TempDir
    Path tmp;
    Path folder;
    Path window;
    byte[] content;
    P9TestClient c;

    @BeforeEach
    void serve() throws Exception {
        folder = Files.createDirectory(tmp.resolve("share"));
        window = P9TestClient.windowFile(tmp);
        content = new byte[3 * MIB];
        new Random(7).nextBytes(content);
        Files.write(folder.resolve("big"), content);
        c = P9TestClient.attachedWithWindow(folder, tmp, window);
        WorkspaceServerTest.walkOk(c, ROOT, 1, "big");
        assertThat(c.lopen(1, O_RDONLY)).isInstanceOf(P9Reply.Lopen.class);
    }

    @AfterEach
    void close() {
        c.closeWithoutInternalErrors();
    }

    private byte[] slice(int from, int length) {
        return Arrays.copyOfRange(content, from, from + length);
    }

    private byte[] windowBytes(int slot, int length) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(length);
        try (FileChannel f = FileChannel.open(window)) {
            f.read(b, (long) slot * Ws9p.SLOT_SIZE);
        }
        return b.array();
    }

    @Test
    void aLargeReadsDataGoesThroughTheWindowAndASmallOnesThroughThePort() throws Exception {
        int big = Ws9p.SLOT_SIZE; // what Linux asks for at most: msize - 24
        assertThat(WorkspaceServer.MSIZE - 24).isEqualTo(big);
        assertThat(data(c.read(1, 5, big))).isEqualTo(slice(5, big));
        assertThat(c.windowed()).hasSize(1);
        ByteBuffer w = c.windowed().getFirst();
        assertThat(w.limit()).isEqualTo(Ws9p.RREADW_SIZE);
        assertThat(w.getInt(P9Codec.HEADER)).isEqualTo(big);
        assertThat(windowBytes(w.getInt(P9Codec.HEADER + 4), big)).as("the data is in the slot named")
                .isEqualTo(slice(5, big));

        assertThat(data(c.read(1, 100, ReadWindow.THRESHOLD - 1))).isEqualTo(slice(100, ReadWindow.THRESHOLD - 1));
        assertThat(data(c.read(1, 100, ReadWindow.THRESHOLD))).isEqualTo(slice(100, ReadWindow.THRESHOLD));
        assertThat(c.windowed()).as("below the threshold the port carries the data").hasSize(2);

        assertThat(data(c.read(1, content.length - 10, big))).as("a short read at the end").isEqualTo(
                slice(content.length - 10, 10));
        assertThat(c.windowed()).hasSize(2);

        int most = WorkspaceServer.MSIZE - P9Codec.READ_DATA_OFFSET;
        assertThat(data(c.read(1, 3, most))).as("more than a slot holds, which msize allows")
                .isEqualTo(slice(3, most));
        assertThat(c.windowed()).as("goes through the port").hasSize(2);
    }

    @Test
    void withoutTheRelaysTwindowEveryReadGoesThroughThePort() throws Exception {
        try (P9TestClient plain = P9TestClient.connect(folder, tmp, false, window)) {
            plain.version();
            plain.attach(ROOT);
            WorkspaceServerTest.walkOk(plain, ROOT, 1, "big");
            plain.lopen(1, O_RDONLY);
            assertThat(data(plain.read(1, 0, 500_000))).isEqualTo(slice(0, 500_000));
            assertThat(plain.windowed()).isEmpty();
        }
    }

    @Test
    void aSlotIsWrittenAgainOnlyOnceGivenBackUnderItsSerial() throws Exception {
        c.returnSlots = false;
        int slots = (int) (dev.kosa8.vm.VmSpec.WORKSPACE_WINDOW_BYTES / Ws9p.SLOT_SIZE);
        for (int i = 0; i < slots; i++) {
            assertThat(data(c.read(1, i, 100_000))).isEqualTo(slice(i, 100_000));
        }
        List<ByteBuffer> lent = c.windowed();
        Set<Integer> used = new HashSet<>();
        lent.forEach(w -> used.add(w.getInt(P9Codec.HEADER + 4)));
        assertThat(used).as("every slot lent out once").hasSize(slots);
        for (ByteBuffer w : lent) {
            int slot = w.getInt(P9Codec.HEADER + 4);
            assertThat(windowBytes(slot, 100_000)).as("slot %d still holds its read", slot)
                    .isEqualTo(slice(lent.indexOf(w), 100_000));
        }

        assertThat(data(c.read(1, 77, 100_000))).as("no slot free: the port carries it").isEqualTo(slice(77, 100_000));
        assertThat(c.windowed()).hasSize(slots);

        ByteBuffer first = lent.getFirst();
        int slot = first.getInt(P9Codec.HEADER + 4);
        int serial = first.getInt(P9Codec.HEADER + 8);
        c.giveBack(slot, serial + 1);
        c.giveBack(slots + 3, serial);
        c.giveBack(-1, serial);
        assertThat(data(c.read(1, 78, 100_000))).isEqualTo(slice(78, 100_000));
        assertThat(c.windowed()).as("a return under another serial, or of no slot, frees nothing").hasSize(slots);
        assertThat(c.log()).filteredOn(l -> l.contains("read-window message")).hasSize(1);

        c.giveBack(slot, serial);
        assertThat(data(c.read(1, 79, 100_000))).isEqualTo(slice(79, 100_000));
        assertThat(c.windowed()).hasSize(slots + 1);
        assertThat(c.windowed().getLast().getInt(P9Codec.HEADER + 4)).isEqualTo(slot);
        assertThat(c.windowed().getLast().getInt(P9Codec.HEADER + 8)).as("a new serial").isNotEqualTo(serial);

        c.giveBack(slot, serial);
        assertThat(data(c.read(1, 80, 100_000))).isEqualTo(slice(80, 100_000));
        assertThat(c.windowed()).as("the old serial, given back twice, frees nothing").hasSize(slots + 1);
    }

    @Test
    void aCheckpointsInstantWaitsUntilEverySlotIsBack() throws Exception {
        c.returnSlots = false;
        assertThat(data(c.read(1, 0, 200_000))).isEqualTo(slice(0, 200_000));
        WorkspaceServer server = c.server();
        assertThat(server.pauseSettled(Duration.ofMillis(300))).as("a slot is out").isFalse();
        assertThat(server.idle()).isTrue();
        assertThat(c.getattr(1)).as("not settled in time: the server serves on").isInstanceOf(P9Reply.Getattr.class);

        ByteBuffer w = c.windowed().getFirst();
        Thread giver = Thread.ofPlatform().start(() -> {
            try {
                Thread.sleep(200);
                c.giveBack(w.getInt(P9Codec.HEADER + 4), w.getInt(P9Codec.HEADER + 8));
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        assertThat(server.pauseSettled(Duration.ofSeconds(5))).isTrue();
        giver.join();
        WorkspaceSnapshot snapshot = server.snapshot();
        assertThat(snapshot.readWindow()).isTrue();
        assertThat(server.pause(Duration.ZERO)).as("a rewind's pause does not wait for slots").isTrue();
        server.resume();
        assertThat(data(c.read(1, 0, 200_000))).isEqualTo(slice(0, 200_000));
    }

    @Test
    void aNewMountTurnsTheWindowOffUntilItsRelayAsks() throws Exception {
        assertThat(data(c.read(1, 0, 100_000))).isEqualTo(slice(0, 100_000));
        assertThat(c.windowed()).hasSize(1);
        c.version();
        c.attach(ROOT);
        WorkspaceServerTest.walkOk(c, ROOT, 1, "big");
        c.lopen(1, O_RDONLY);
        assertThat(data(c.read(1, 0, 100_000))).isEqualTo(slice(0, 100_000));
        assertThat(c.windowed()).as("the new mount has not asked").hasSize(1);
        c.askForWindow();
        assertThat(data(c.read(1, 0, 100_000))).isEqualTo(slice(0, 100_000));
        assertThat(c.windowed()).hasSize(2);
    }

    @Test
    void aRestoredServerUsesTheWindowIfTheSnapshotsRelayHadAskedForIt() throws Exception {
        WorkspaceServer server = c.server();
        assertThat(server.pauseSettled(Duration.ofSeconds(5))).isTrue();
        WorkspaceSnapshot asked = server.snapshot();
        server.resume();
        WorkspaceSnapshot notAsked = new WorkspaceSnapshot(asked.version(), asked.msize(), asked.fids(), false, false);
        for (WorkspaceSnapshot s : List.of(asked, notAsked)) {
            try (P9TestClient restored = P9TestClient.connect(folder, tmp, false, P9TestClient.windowFile(tmp))) {
                restored.server().restore(s);
                assertThat(data(restored.read(1, 9, 300_000))).isEqualTo(slice(9, 300_000));
                assertThat(restored.windowed()).hasSize(s.readWindow() ? 1 : 0);
            }
        }
    }

    @Test
    void aSnapshotFromBeforeTheWindowReadsAsNotAsked() throws Exception {
        WorkspaceSnapshot old = new com.fasterxml.jackson.databind.ObjectMapper().readValue(
                "{\"version\":1,\"msize\":1048576,\"fids\":[]}", WorkspaceSnapshot.class);
        assertThat(old.readWindow()).isFalse();
        assertThat(old.msize()).isEqualTo(1048576);
    }

    @Test
    void windowMessagesOfTheWrongSizeAreIgnoredAndTheServerServesOn() throws Exception {
        ByteBuffer longTwindow = ByteBuffer.allocate(9).order(ByteOrder.LITTLE_ENDIAN);
        longTwindow.putInt(9).put((byte) Ws9p.TWINDOW).putShort((short) P9Codec.NOTAG).putShort((short) 0);
        c.sendRaw(longTwindow.flip());
        ByteBuffer shortReturn = ByteBuffer.allocate(11).order(ByteOrder.LITTLE_ENDIAN);
        shortReturn.putInt(11).put((byte) Ws9p.TRETURN).putShort((short) 0).putInt(0);
        c.sendRaw(shortReturn.flip());
        assertThat(data(c.read(1, 1, 100_000))).isEqualTo(slice(1, 100_000));
        assertThat(c.log()).filteredOn(l -> l.contains("read-window message")).hasSize(1);
    }
}
