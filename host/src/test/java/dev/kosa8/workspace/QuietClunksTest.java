package dev.kosa8.workspace;

import static dev.kosa8.workspace.P9TestClient.O_RDONLY;
import static dev.kosa8.workspace.P9TestClient.ROOT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.protocol.Ws9p;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Quiet clunks ({@link QuietClunks}) as the server takes them: a Tquiet is answered under NOTAG, a
 * Tclunkq forgets its fid with no answer and frees its number for the very next request, closes the
 * fid's descriptor, waits behind a pause like any request, and one that names nothing changes
 * nothing. The client plays the guest's relay.
 */
class QuietClunksTest {
    private static final int EBADF = 9;
    /** Long enough for an answer that should not come to have come; the server answers in microseconds. */
    private static final Duration NO_ANSWER = Duration.ofMillis(300);

    @TempDir
    Path tmp;
    Path folder;
    P9TestClient c;

    @BeforeEach
    void serve() throws Exception {
        folder = Files.createDirectory(tmp.resolve("share"));
        Files.writeString(folder.resolve("f"), "first");
        Files.writeString(folder.resolve("g"), "second");
        c = P9TestClient.attached(folder, tmp);
    }

    @AfterEach
    void close() {
        c.closeWithoutInternalErrors();
    }

    @Test
    void aTquietIsAnsweredWithAnRquietUnderNotag() throws Exception {
        c.askQuiet();
        ByteBuffer answer = c.awaitFrame(P9Codec.NOTAG, P9TestClient.TIMEOUT).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(answer.remaining()).isEqualTo(Ws9p.TQUIET_SIZE);
        assertThat(answer.getInt(0)).isEqualTo(Ws9p.TQUIET_SIZE);
        assertThat(answer.get(4) & 0xff).isEqualTo(Ws9p.RQUIET);
    }

    @Test
    void aTclunkqForgetsItsFidUnansweredAndTheNextRequestMayUseItsNumber() throws Exception {
        WorkspaceServerTest.walkOk(c, ROOT, 1, "f");
        assertThat(c.lopen(1, O_RDONLY)).isInstanceOf(P9Reply.Lopen.class);
        assertThat(openDescriptorsOf(folder.resolve("f"))).isEqualTo(1);

        int quiet = c.clunkQuietly(1);
        // sent right behind it, as the kernel does once the relay has answered the Tclunk
        WorkspaceServerTest.walkOk(c, ROOT, 1, "g");
        assertThat(c.lopen(1, O_RDONLY)).isInstanceOf(P9Reply.Lopen.class);
        ByteBuffer read = ((P9Reply.Read) c.read(1, 0, 100)).data();
        byte[] text = new byte[read.remaining()];
        read.duplicate().get(text);
        assertThat(new String(text, java.nio.charset.StandardCharsets.ISO_8859_1)).isEqualTo("second");

        assertThatThrownBy(() -> c.awaitFrame(quiet, NO_ANSWER)).hasMessageContaining("no reply to tag " + quiet);
        assertThat(openDescriptorsOf(folder.resolve("f"))).as("the forgotten fid's descriptor").isZero();
        assertThat(c.log()).noneMatch(line -> line.contains("quiet clunk"));
    }

    @Test
    void aTclunkqOfNoFidOrOfTheWrongSizeChangesNothingAndIsLoggedOnce() throws Exception {
        WorkspaceServerTest.walkOk(c, ROOT, 1, "f");
        c.clunkQuietly(77);
        c.clunkQuietly(78);
        ByteBuffer longer = ByteBuffer.allocate(Ws9p.TCLUNKQ_SIZE + 4).order(ByteOrder.LITTLE_ENDIAN);
        longer.putInt(Ws9p.TCLUNKQ_SIZE + 4).put((byte) Ws9p.TCLUNKQ).putShort((short) 5).putInt(1)
                .putInt(0);
        c.sendRaw(longer.flip());

        assertThat(c.getattr(1)).as("fid 1, named by the Tclunkq that does not fit").isInstanceOf(P9Reply.Getattr.class);
        assertThat(c.log()).filteredOn(line -> line.contains("quiet clunk")).hasSize(1);
    }

    @Test
    void aPausedServerTakesATclunkqOnlyOnceResumed() throws Exception {
        WorkspaceServerTest.walkOk(c, ROOT, 1, "f");
        assertThat(c.server().pause(Duration.ofSeconds(2))).isTrue();
        c.clunkQuietly(1);
        Thread.sleep(NO_ANSWER.toMillis()); // time for the reader to take it, were it not held back
        assertThat(c.server().snapshot().fids()).extracting(WorkspaceSnapshot.FidState::fid).containsExactly(0, 1);
        c.server().resume();
        assertThat(c.getattr(1)).isEqualTo(new P9Reply.Lerror(EBADF));
    }

    /**
     * A Tclunkq on its way at a checkpoint's instant leaves its fid in the snapshot, while the guest's
     * kernel has let the number go: after a rewind, the kernel's next use of the number as a new fid
     * must work. A fid the guest made itself stays refused as a new fid, as 9p wants.
     */
    @Test
    void aRestoredFidIsReplacedWhenTheGuestNamesItAsANewFidButALiveOneIsNot() throws Exception {
        WorkspaceServerTest.walkOk(c, ROOT, 1, "f");
        assertThat(c.lopen(1, O_RDONLY)).isInstanceOf(P9Reply.Lopen.class);
        assertThat(c.server().pause(Duration.ofSeconds(2))).isTrue();
        WorkspaceSnapshot snap = c.server().snapshot();
        c.server().restore(snap);
        c.server().resume();
        assertThat(openDescriptorsOf(folder.resolve("f"))).as("fid 1, reopened by the restore").isEqualTo(1);

        WorkspaceServerTest.walkOk(c, ROOT, 1, "g");
        assertThat(c.getattr(1)).isInstanceOf(P9Reply.Getattr.class);
        assertThat(openDescriptorsOf(folder.resolve("f"))).as("the replaced fid's descriptor").isZero();

        assertThat(c.walk(ROOT, 1, "f")).as("fid 1 is the guest's own now").isEqualTo(new P9Reply.Lerror(EBADF));
        WorkspaceServerTest.walkOk(c, ROOT, 2, "f");
        assertThat(c.walk(ROOT, 2, "g")).isEqualTo(new P9Reply.Lerror(EBADF));
    }

    /**
     * A Tclunkq takes its fid out of the table before a worker closes the descriptor; a server closed
     * in between (the guest's last clunks come just before a sandbox stops) must still close it: the
     * fid is unlisted here, and its release left to the close, as when the workers are shut down first.
     */
    @Test
    void aFidUnlistedButNotYetReleasedIsClosedWhenTheServerLetsGoOfEverything() throws Exception {
        int root = LinuxFs.openRoot(folder.toString());
        P9Operations ops = new P9Operations(root, (int) Files.getAttribute(folder, "unix:uid"), 022,
                WorkspaceServer.MSIZE, line -> { });
        try {
            ByteBuffer out = ByteBuffer.allocate(8192);
            ops.serve(1, new P9Request.Version(WorkspaceServer.MSIZE, P9Operations.VERSION), out.clear());
            ops.serve(1, new P9Request.Attach(ROOT, P9Codec.NOFID, "", "", 0), out.clear());
            ops.serve(1, new P9Request.Walk(ROOT, 1, java.util.List.of("f")), out.clear());
            ops.serve(1, new P9Request.Lopen(1, O_RDONLY), out.clear());
            assertThat(openDescriptorsOf(folder.resolve("f"))).isEqualTo(1);
            assertThat(ops.unlist(1)).isNotNull();
            assertThat(ops.unlist(1)).as("out of the table").isNull();
            ops.clunkAll();
            assertThat(openDescriptorsOf(folder.resolve("f"))).isZero();
        } finally {
            LinuxFs.close(root);
        }
    }

    @Test
    void aSnapshotSaysItsGuestMaySendQuietClunksAndAFormatThisServerDoesNotKnowIsRefused() throws Exception {
        assertThat(c.server().pause(Duration.ofSeconds(2))).isTrue();
        WorkspaceSnapshot snap = c.server().snapshot();
        assertThat(snap.version()).isEqualTo(2);
        int unknown = WorkspaceSnapshot.CACHED_FORMAT + 1;
        WorkspaceSnapshot later = new WorkspaceSnapshot(unknown, snap.msize(), snap.fids(), snap.readWindow(), false);
        assertThatThrownBy(() -> c.server().restore(later)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("format " + unknown);
        c.server().restore(snap);
        c.server().resume();
        assertThat(c.getattr(ROOT)).isInstanceOf(P9Reply.Getattr.class);
    }

    /** How many of this JVM's descriptors are open on {@code file}. */
    private static long openDescriptorsOf(Path file) throws Exception {
        Path real = file.toRealPath();
        long n = 0;
        try (var fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : (Iterable<Path>) fds::iterator) {
                try {
                    if (Files.readSymbolicLink(fd).equals(real)) {
                        n++;
                    }
                } catch (java.io.IOException gone) {
                    // closed while listed
                }
            }
        }
        return n;
    }
}
