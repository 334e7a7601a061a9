package dev.kosa8.workspace;

import static dev.kosa8.workspace.P9TestClient.O_RDWR;
import static dev.kosa8.workspace.P9TestClient.ROOT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.Ws9p;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The write window ({@link WriteWindow}) as the server uses it: a Twritew is served as the Twrite
 * it stands for, with the data of the slot it names, and one that names anything outside the
 * window is refused under its tag while the server serves on. The client plays the guest's relay
 * (it writes the window file as the relay writes the disk).
 */
class WriteWindowTest {
    private static final int MIB = 1 << 20;
    private static final Duration REPLY = Duration.ofSeconds(5);
    /** A slot's worth: the most a Twrite of the relay's mount (msize 1 MiB, the fd transport's) carries, and then some. */
    private static final int MAX_DATA = Ws9p.SLOT_SIZE;

    @TempDir
    Path tmp;
    Path folder;
    Path writes;
    P9TestClient c;

    @BeforeEach
    void serve() throws Exception {
        folder = Files.createDirectory(tmp.resolve("share"));
        writes = P9TestClient.writesFile(tmp);
        c = P9TestClient.attachedWithWindows(folder, tmp, null, writes);
        assertThat(c.walk(ROOT, 1)).isInstanceOf(P9Reply.Walk.class);
        assertThat(c.lcreate(1, "out", O_RDWR, 0644)).isInstanceOf(P9Reply.Lcreate.class);
    }

    @AfterEach
    void close() {
        c.closeWithoutInternalErrors();
    }

    private P9Reply answer(int tag) throws Exception {
        return c.awaitResponse(tag, REPLY).reply();
    }

    private static byte[] random(int length, int seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void aTwritewWritesTheDataOfItsSlotWhereItsHeaderSays() throws Exception {
        byte[] first = random(MAX_DATA, 1);
        byte[] second = random(100_000, 2);
        assertThat(answer(c.writeThroughWindow(1, 0, first, 3))).isEqualTo(new P9Reply.Write(MAX_DATA));
        assertThat(answer(c.writeThroughWindow(1, 10, second, 15))).isEqualTo(new P9Reply.Write(second.length));
        byte[] expected = first.clone();
        System.arraycopy(second, 0, expected, 10, second.length);
        assertThat(Files.readAllBytes(folder.resolve("out"))).isEqualTo(expected);
    }

    @Test
    void slotsAreServedInAnyOrderAndManyAtOnce() throws Exception {
        int piece = 64 * 1024;
        byte[] all = random(16 * piece, 3);
        int[] tags = new int[16];
        for (int slot = 0; slot < 16; slot++) {
            tags[slot] = c.writeThroughWindow(1, (long) slot * piece,
                    Arrays.copyOfRange(all, slot * piece, (slot + 1) * piece), 15 - slot);
        }
        for (int tag : tags) {
            assertThat(answer(tag)).isEqualTo(new P9Reply.Write(piece));
        }
        assertThat(Files.readAllBytes(folder.resolve("out"))).isEqualTo(all);
    }

    @Test
    void aCountLargerThanTheNegotiatedMsizeCarriesIsRefused() throws Exception {
        int msize = 64 * 1024;
        assertThat(answer(c.sendVersion(msize, P9Operations.VERSION)))
                .isEqualTo(new P9Reply.Version(msize, P9Operations.VERSION));
        c.attach(ROOT);
        WorkspaceServerTest.walkOk(c, ROOT, 1, "out");
        c.lopen(1, O_RDWR);
        int most = msize - Ws9p.TWRITE_HEADER;
        assertThat(answer(c.sendTwritew(1, 0, most + 1L, 0))).isEqualTo(new P9Reply.Lerror(ErrnoException.EINVAL));
        byte[] data = random(most, 5);
        assertThat(answer(c.writeThroughWindow(1, 0, data, 0))).isEqualTo(new P9Reply.Write(most));
        assertThat(Files.readAllBytes(folder.resolve("out"))).isEqualTo(data);
    }

    @Test
    void aSlotOrCountOutsideTheWindowIsRefusedAndTheServerServesOn() throws Exception {
        long[][] bad = {
            {0, 16}, // the window has 16 slots
            {0, 0xffff_ffffL}, // a slot number that is negative as an int
            {Ws9p.SLOT_SIZE + 1L, 0}, // more than a slot
            {0xffff_ffffL, 0},
        };
        for (long[] b : bad) {
            assertThat(answer(c.sendTwritew(1, 0, b[0], b[1])))
                    .as("count %d, slot %d", b[0], b[1]).isEqualTo(new P9Reply.Lerror(ErrnoException.EINVAL));
        }
        assertThat(Files.size(folder.resolve("out"))).isZero();
        assertThat(c.write(1, 0, new byte[] {42})).isEqualTo(new P9Reply.Write(1));
        assertThat(answer(c.writeThroughWindow(1, 1, random(MIB / 2, 4), 0))).isEqualTo(new P9Reply.Write(MIB / 2));
    }

    @Test
    void aTwritewOfTheWrongSizeIsRefusedUnderItsTag() throws Exception {
        for (int size : new int[] {Ws9p.TWRITEW_SIZE - 1, Ws9p.TWRITEW_SIZE + 1, P9Codec.HEADER}) {
            byte[] frame = new byte[size];
            java.nio.ByteBuffer.wrap(frame).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(size)
                    .put((byte) Ws9p.TWRITEW).putShort((short) 77);
            c.sendRaw(frame);
            assertThat(answer(77)).as("%d bytes", size).isEqualTo(new P9Reply.Lerror(ErrnoException.EINVAL));
        }
    }

    @Test
    void aTwritewForAFidNotOpenIsRefusedAsItsTwriteWouldBe() throws Exception {
        assertThat(c.walk(ROOT, 2)).isInstanceOf(P9Reply.Walk.class);
        P9Reply plain = c.write(2, 0, random(40_000, 5));
        assertThat(plain).isInstanceOf(P9Reply.Lerror.class);
        assertThat(answer(c.writeThroughWindow(2, 0, random(40_000, 5), 0))).isEqualTo(plain);
        assertThat(answer(c.writeThroughWindow(99, 0, random(40_000, 5), 0))).isInstanceOf(P9Reply.Lerror.class);
    }

    @Test
    void aServerWhoseWriteWindowFileIsMissingServesWithoutIt() throws Exception {
        // a daemon re-attaching to a sandbox whose QEMU an older daemon started, without a write window
        try (P9TestClient old = P9TestClient.connect(folder, tmp, false, null, tmp.resolve("no-such-window"))) {
            assertThat(old.version()).isInstanceOf(P9Reply.Version.class);
            assertThat(old.attach(ROOT)).isInstanceOf(P9Reply.Attach.class);
            assertThat(old.walk(ROOT, 1, "out")).isInstanceOf(P9Reply.Walk.class);
            assertThat(old.lopen(1, O_RDWR)).isInstanceOf(P9Reply.Lopen.class);
            assertThat(old.write(1, 0, random(40_000, 6))).isEqualTo(new P9Reply.Write(40_000));
            assertThat(old.awaitResponse(old.sendTwritew(1, 0, 40_000, 0), REPLY).reply())
                    .isEqualTo(new P9Reply.Lerror(P9Exception.EPROTO));
            assertThat(old.log()).anyMatch(l -> l.startsWith("no write window at "));
        }
    }

    @Test
    void aServerWithoutAWriteWindowAnswersATwritewAsAnUnknownType() throws Exception {
        try (P9TestClient plain = P9TestClient.attached(folder, tmp)) {
            assertThat(plain.walk(ROOT, 1, "out")).isInstanceOf(P9Reply.Walk.class);
            assertThat(plain.lopen(1, O_RDWR)).isInstanceOf(P9Reply.Lopen.class);
            assertThat(plain.awaitResponse(plain.sendTwritew(1, 0, 40_000, 0), REPLY).reply())
                    .isEqualTo(new P9Reply.Lerror(P9Exception.EPROTO));
        }
        assertThat(Files.size(folder.resolve("out"))).isZero();
    }
}
