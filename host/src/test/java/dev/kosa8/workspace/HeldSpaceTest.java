package dev.kosa8.workspace;

import static dev.kosa8.workspace.P9TestClient.O_CREAT;
import static dev.kosa8.workspace.P9TestClient.O_TRUNC;
import static dev.kosa8.workspace.P9TestClient.O_WRONLY;
import static dev.kosa8.workspace.P9TestClient.ROOT;
import static dev.kosa8.workspace.P9TestClient.errno;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The held layer's bound, attacked through the server as a guest's kernel would ask: a guest
 * writing without end at a held path, or making files there without end, fills the layer to its
 * bound and then gets ENOSPC; the host's disk past that is never taken; what it removes makes room
 * again; and the folder beside it is not bounded by it.
 */
class HeldSpaceTest {
    private static final int ENOSPC = 28;
    private static final int PIECE = 64 * 1024;

    @TempDir
    Path tmp;
    P9TestClient c;

    @AfterEach
    void close() {
        if (c != null) {
            c.closeWithoutInternalErrors();
        }
    }

    private HeldChanges serve(HeldSpace.Bound bound) throws Exception {
        Path folder = Files.createDirectory(tmp.resolve("share"));
        Files.createDirectories(folder.resolve(".git/hooks"));
        Files.writeString(folder.resolve(".git/hooks/pre-commit.sample"), "#!/bin/sh\n");
        Files.writeString(folder.resolve(".envrc"), "export A=1\n");
        HeldChanges held = HeldChanges.open(tmp.resolve("held"), null, bound, m -> { });
        c = P9TestClient.attachedHeld(folder, tmp, held);
        return held;
    }

    /** Writes {@code fid} in pieces until the server refuses one; the errno of the refusal, and how much went in. */
    private long[] writeUntilRefused(int fid, long most) throws Exception {
        byte[] piece = new byte[PIECE];
        java.util.Arrays.fill(piece, (byte) 'x');
        long at = 0;
        while (at < most) {
            P9Reply r = c.write(fid, at, piece);
            if (!(r instanceof P9Reply.Write w)) {
                return new long[] {errno(r), at};
            }
            at += w.count();
        }
        return new long[] {0, at};
    }

    @Test
    void aGuestWritingWithoutEndAtAHeldPathGetsEnospcAtTheBoundAndTheHostKeepsNoMore() throws Exception {
        long bound = 4L << 20;
        serve(new HeldSpace.Bound(bound, 1000));
        WorkspaceServerTest.walkOk(c, ROOT, 1, ".git", "hooks");
        assertThat(c.lcreate(1, "pre-commit", O_WRONLY | O_CREAT | O_TRUNC, 0755)).isInstanceOf(P9Reply.Lcreate.class);

        long[] refused = writeUntilRefused(1, 64L << 20);
        assertThat(refused[0]).as("errno at the bound").isEqualTo(ENOSPC);
        assertThat(refused[1]).as("bytes written before it").isBetween(bound - 2 * PIECE, bound);
        long kept = Files.size(tmp.resolve("held/tree/.git/hooks/pre-commit"));
        assertThat(kept).isEqualTo(refused[1]);
        assertThat(HeldSpace.measure(LinuxFs.openRoot(tmp.resolve("held/tree").toString())).bytes())
                .as("the tree's blocks").isLessThanOrEqualTo(bound);
        assertThat(tmp.resolve("share/.git/hooks/pre-commit")).as("the folder has none of it").doesNotExist();

        // the folder beside it is not the held layer's to bound
        WorkspaceServerTest.walkOk(c, ROOT, 2);
        assertThat(c.lcreate(2, "notes.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644)).isInstanceOf(P9Reply.Lcreate.class);
        assertThat(writeUntilRefused(2, 8L << 20)).containsExactly(0, 8L << 20);
    }

    /** A held file opened for writing and then removed is still the layer's: its writes count and stop at the bound. */
    @Test
    void aHeldFileWrittenAfterItWasRemovedStillCountsAgainstTheBound() throws Exception {
        HeldChanges held = serve(new HeldSpace.Bound(1L << 20, 1000));
        WorkspaceServerTest.walkOk(c, ROOT, 1);
        // a held name the folder never had: once removed, the layer forgets its unit
        assertThat(c.lcreate(1, ".mise.toml", O_WRONLY | O_CREAT | O_TRUNC, 0644)).isInstanceOf(P9Reply.Lcreate.class);
        WorkspaceServerTest.walkOk(c, ROOT, 2);
        assertThat(c.unlinkAt(2, ".mise.toml", 0)).isInstanceOf(P9Reply.UnlinkAt.class);
        assertThat(held.units()).isEmpty();
        assertThat(writeUntilRefused(1, 16L << 20)[0]).isEqualTo(ENOSPC);
    }

    @Test
    void whatTheGuestRemovesFromTheHeldLayerMakesRoomAgain() throws Exception {
        full(); // measured past the bound: still full, and a removal, which needs no room, is never refused
        c.clunk(1);

        WorkspaceServerTest.walkOk(c, ROOT, 2, ".git", "hooks");
        assertThat(c.unlinkAt(2, "big", 0)).isInstanceOf(P9Reply.UnlinkAt.class);
        Thread.sleep(HeldSpace.REMEASURE_AFTER_MILLIS + 100); // a guest at the bound is measured at most once a second
        WorkspaceServerTest.walkOk(c, ROOT, 3, ".git", "hooks");
        assertThat(c.lcreate(3, "small", O_WRONLY | O_CREAT | O_TRUNC, 0755)).isInstanceOf(P9Reply.Lcreate.class);
        assertThat(c.write(3, 0, "#!/bin/sh\n".getBytes())).isInstanceOf(P9Reply.Write.class);
    }

    /**
     * Fills a 1 MiB layer through {@code .git/hooks/big} (fid 1, left open) until the server refuses a write, then
     * past its bound as measured (as a file system allocating ahead of a growing file leaves it).
     */
    private HeldChanges full() throws Exception {
        HeldChanges held = serve(new HeldSpace.Bound(1L << 20, 1000));
        WorkspaceServerTest.walkOk(c, ROOT, 1, ".git", "hooks");
        assertThat(c.lcreate(1, "big", O_WRONLY | O_CREAT | O_TRUNC, 0755)).isInstanceOf(P9Reply.Lcreate.class);
        assertThat(writeUntilRefused(1, 8L << 20)[0]).isEqualTo(ENOSPC);
        Files.write(tmp.resolve("held/tree/.git/hooks/big"), new byte[512 * 1024],
                java.nio.file.StandardOpenOption.APPEND);
        Thread.sleep(HeldSpace.REMEASURE_AFTER_MILLIS + 100);
        assertThat(errno(c.write(1, 0, new byte[PIECE]))).as("measured past the bound").isEqualTo(ENOSPC);
        return held;
    }

    @Test
    void aFullLayerStillTakesRenamesWithinItAndRemovalsOfUnitsNotYetHeld() throws Exception {
        HeldChanges held = full();
        // a rename within the layer needs no room
        WorkspaceServerTest.walkOk(c, ROOT, 2, ".git", "hooks");
        assertThat(c.renameAt(2, "big", 2, "old")).isInstanceOf(P9Reply.RenameAt.class);
        // removing a unit the layer does not hold yet needs no room: held as removed, the folder keeps it
        WorkspaceServerTest.walkOk(c, ROOT, 3);
        assertThat(c.unlinkAt(3, ".envrc", 0)).isInstanceOf(P9Reply.UnlinkAt.class);
        assertThat(held.units()).extracting(HeldChanges.Unit::path).contains(".envrc");
        assertThat(tmp.resolve("share/.envrc")).hasContent("export A=1");
    }

    @Test
    void aGuestMakingFilesWithoutEndAtAHeldPathGetsEnospcAtTheBoundOfEntries() throws Exception {
        serve(new HeldSpace.Bound(1L << 30, 50));
        int made = 0;
        int refusedWith = 0;
        for (int i = 0; i < 200; i++) {
            WorkspaceServerTest.walkOk(c, ROOT, 1, ".git", "hooks");
            P9Reply r = c.lcreate(1, "h" + i, O_WRONLY | O_CREAT | O_TRUNC, 0755);
            c.clunk(1);
            if (!(r instanceof P9Reply.Lcreate)) {
                refusedWith = errno(r);
                break;
            }
            made++;
        }
        assertThat(refusedWith).isEqualTo(ENOSPC);
        assertThat(made).isBetween(40, 50);
        // at the bound of entries, a create of an existing name opens it (no new entry), as Tlopen would
        WorkspaceServerTest.walkOk(c, ROOT, 2, ".git", "hooks");
        assertThat(c.lcreate(2, "h0", O_WRONLY | O_CREAT | O_TRUNC, 0755)).isInstanceOf(P9Reply.Lcreate.class);
        c.clunk(2);
        assertThat(HeldSpace.measure(LinuxFs.openRoot(tmp.resolve("held/tree").toString())).entries())
                .isLessThanOrEqualTo(50);
    }

    @Test
    void aUnitTooLargeToHoldIsNotHeldAndTheChangeIsRefused() throws Exception {
        Path folder = Files.createDirectory(tmp.resolve("share"));
        Files.createDirectories(folder.resolve(".husky"));
        Files.write(folder.resolve(".husky/blob"), new byte[2 << 20]);
        HeldChanges held = HeldChanges.open(tmp.resolve("held"), null, new HeldSpace.Bound(1L << 20, 1000), m -> { });
        c = P9TestClient.attachedHeld(folder, tmp, held);

        WorkspaceServerTest.walkOk(c, ROOT, 1, ".husky");
        P9Reply r = c.lcreate(1, "pre-commit", O_WRONLY | O_CREAT | O_TRUNC, 0755);
        assertThat(errno(r)).isEqualTo(ENOSPC);
        assertThat(held.units()).isEmpty();
        assertThat(tmp.resolve("held/tree/.husky")).as("refused before anything is copied").doesNotExist();
        assertThat(folder.resolve(".husky/pre-commit")).doesNotExist();
        c.clunk(1);

        // a file the folder has there is not opened for writing in the folder instead: the unit is not held
        Files.writeString(folder.resolve(".husky/pre-push"), "#!/bin/sh\n");
        WorkspaceServerTest.walkOk(c, ROOT, 1, ".husky");
        assertThat(errno(c.lcreate(1, "pre-push", O_WRONLY | O_CREAT | O_TRUNC, 0755))).isEqualTo(ENOSPC);
        assertThat(folder.resolve(".husky/pre-push")).hasContent("#!/bin/sh");
        c.clunk(1);

        // a unit deeper down: not even its parents are made in the tree
        Files.createDirectories(folder.resolve("a/b/.config/mise"));
        Files.write(folder.resolve("a/b/.config/mise/blob"), new byte[2 << 20]);
        WorkspaceServerTest.walkOk(c, ROOT, 2, "a", "b", ".config", "mise");
        assertThat(errno(c.lcreate(2, "config.toml", O_WRONLY | O_CREAT | O_TRUNC, 0644))).isEqualTo(ENOSPC);
        assertThat(tmp.resolve("held/tree/a")).doesNotExist();
    }

    /**
     * A sparse file costs its blocks where it lies, but a copy writes its holes out whole: moving a file of 64 MiB
     * of holes into a 1 MiB layer is refused before anything is copied.
     */
    @Test
    void aSparseFileMovedIntoTheLayerIsCountedAtItsSize() throws Exception {
        serve(new HeldSpace.Bound(1L << 20, 1000));
        try (var f = new java.io.RandomAccessFile(tmp.resolve("share/sparse").toFile(), "rw")) {
            f.setLength(64L << 20);
        }
        WorkspaceServerTest.walkOk(c, ROOT, 1);
        WorkspaceServerTest.walkOk(c, ROOT, 2);
        assertThat(errno(c.renameAt(1, "sparse", 2, ".envrc"))).isEqualTo(ENOSPC);
        assertThat(tmp.resolve("share/sparse")).exists();
        assertThat(tmp.resolve("share/.envrc")).hasContent("export A=1");
        assertThat(HeldSpace.measure(LinuxFs.openRoot(tmp.resolve("held/tree").toString())).bytes())
                .isLessThanOrEqualTo(1L << 20);
    }

    /** A unit to copy is measured only as far as the bound: a huge folder costs a refused try no more than that. */
    @Test
    void measuringStopsOncePastWhatIsEnough() throws Exception {
        Path big = Files.createDirectories(tmp.resolve("big/d"));
        for (int i = 0; i < 300; i++) {
            Files.writeString(big.resolve("f" + i), "x");
        }
        int root = LinuxFs.openRoot(tmp.resolve("big").toString());
        try {
            assertThat(HeldSpace.measure(root).entries()).isEqualTo(301);
            HeldSpace.Usage cut = HeldSpace.measure(root, "d", new HeldSpace.Usage(Long.MAX_VALUE, 10), false);
            assertThat(cut.entries()).isEqualTo(11);
            assertThat(HeldSpace.measure(root, "d/f7", new HeldSpace.Usage(Long.MAX_VALUE, 10), false).entries()).isOne();
            assertThat(HeldSpace.measure(root, "gone", new HeldSpace.Usage(Long.MAX_VALUE, 10), false).entries()).isZero();
        } finally {
            LinuxFs.close(root);
        }
    }
}
