package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.checkpoint.Undo;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link DiskBudget}: a checkpoint is taken only while the guest writing its
 * whole disk anew, a pause to disk and full logs would still fit.
 */
class DiskBudgetTest {
    static final long GIB = 1L << 30;
    static final Budget BUDGET = new Budget(8 * GIB, 64, 0, 4L << 20);

    @Test
    void aCheckpointIsAdmittedOnlyWithRoomForTheDiskWrittenAnewRamTwiceAndTheLogs() {
        // 4 GiB disk, 1 GiB of RAM: room is 4 + 2 GiB and the logs' 37 MiB
        DiskUsage small = new DiskUsage(GIB / 2, 4 * GIB, GIB / 4, 0, 1 << 20, 4096);
        assertThatCode(() -> DiskBudget.admitCheckpoint("abc123abc123", 1024, BUDGET, small)).doesNotThrowAnyException();
        DiskUsage big = new DiskUsage(GIB + GIB / 2, 4 * GIB, GIB / 2, 0, 1 << 20, 4096);
        assertThatThrownBy(() -> DiskBudget.admitCheckpoint("abc123abc123", 1024, BUDGET, big))
                .isInstanceOfSatisfying(KosaException.class, e -> {
                    assertThat(e.kind()).isEqualTo(KosaException.Kind.LIMIT);
                    assertThat(e.getMessage()).contains("would pass its disk budget of 8.00 GiB")
                            .contains("disk 1.50 GiB").contains("checkpoints 0.50 GiB");
                    assertThat(e.suggestion()).contains("kosa8 checkpoint rm abc123abc123");
                });
    }

    @Test
    void whatAnAdmittedCheckpointMayAddIsTheRamItKeptRoomFor() {
        DiskUsage before = new DiskUsage(GIB, 4 * GIB, 0, 0, 1 << 20, 4096);
        DiskBudget.admitCheckpoint("abc123abc123", 1024, BUDGET, before);
        DiskUsage after = new DiskUsage(GIB, 4 * GIB, GIB, 0, 1 << 20, 4096);
        assertThat(DiskBudget.fits(after, BUDGET, 1024)).as("its RAM, as reserved").isTrue();
        DiskUsage hugeWorkspace = new DiskUsage(GIB, 4 * GIB, 2 * GIB, 0, 1 << 20, 4096);
        assertThat(DiskBudget.fits(hugeWorkspace, BUDGET, 1024)).as("more than reserved: removed again").isFalse();
    }

    @Test
    void theHeldLayerCountsAsKeptSoACheckpointItWouldPushPastTheBudgetIsRefusedNamingIt() {
        DiskUsage withoutHeld = new DiskUsage(GIB / 2, 4 * GIB, GIB / 4, 0, 1 << 20, 4096);
        assertThatCode(() -> DiskBudget.admitCheckpoint("abc123abc123", 1024, BUDGET, withoutHeld))
                .doesNotThrowAnyException();
        assertThat(DiskBudget.fits(withoutHeld, BUDGET, 1024)).isTrue();
        // 3 GiB the guest wrote to held paths: 3.75 GiB kept, and the room a checkpoint needs no longer fits in 8
        DiskUsage withHeld = new DiskUsage(GIB / 2, 4 * GIB, GIB / 4, 3 * GIB, 1 << 20, 4096);
        assertThat(withHeld.total()).isEqualTo(withoutHeld.total() + 3 * GIB);
        assertThatThrownBy(() -> DiskBudget.admitCheckpoint("abc123abc123", 1024, BUDGET, withHeld))
                .isInstanceOfSatisfying(KosaException.class, e -> {
                    assertThat(e.kind()).isEqualTo(KosaException.Kind.LIMIT);
                    assertThat(e.getMessage()).contains("held changes 3.00 GiB");
                    assertThat(e.suggestion()).contains("kosa8 review abc123abc123");
                });
        assertThat(DiskBudget.fits(withHeld, BUDGET, 1024)).as("checked again after the checkpoint").isFalse();
    }

    @Test
    void requestBodiesTheBrokerHoldsOnDiskCountSoACheckpointTheyWouldPushPastTheBudgetIsRefused(@TempDir Path root) {
        SandboxLayout layout = new SandboxLayout(new HostPaths(root, root, root));
        String id = "abc123abc123";
        Undo undo = new Undo(layout.directory(id), id, m -> { });
        DiskUsage none = DiskUsage.of(layout, id, undo);
        DiskUsage spooling = DiskUsage.of(layout, id, undo, 2 * GIB);
        assertThat(spooling.spool()).isEqualTo(2 * GIB);
        assertThat(spooling.total()).isEqualTo(none.total() + 2 * GIB);
        // 0.75 GiB kept and 6 GiB of room fit in 8; two uploads of 1 GiB being judged (the spool's own bound) do not
        DiskUsage without = new DiskUsage(GIB / 2, 4 * GIB, GIB / 4, 0, 1 << 20, 4096, 0);
        assertThatCode(() -> DiskBudget.admitCheckpoint(id, 1024, BUDGET, without)).doesNotThrowAnyException();
        DiskUsage with = new DiskUsage(GIB / 2, 4 * GIB, GIB / 4, 0, 1 << 20, 4096, 2 * GIB);
        assertThatThrownBy(() -> DiskBudget.admitCheckpoint(id, 1024, BUDGET, with))
                .isInstanceOfSatisfying(KosaException.class, e -> assertThat(e.getMessage())
                        .contains("request bodies being judged 2.00 GiB"));
    }

    @Test
    void aSandboxsHeldLayerIsMeasuredAndARemovedSandboxsKeptChangesAreReclaimable(@TempDir Path root)
            throws Exception {
        SandboxLayout layout = new SandboxLayout(new HostPaths(root, root, root));
        String id = "abc123abc123";
        Path tree = HeldLayers.dir(layout, id).resolve("tree");
        Files.createDirectories(tree.resolve(".git/hooks"));
        Files.write(tree.resolve(".git/hooks/pre-commit"), new byte[3000]);
        Files.write(tree.resolve(".envrc"), new byte[500]);
        DiskUsage u = DiskUsage.of(layout, id, new Undo(layout.directory(id), id, m -> { }));
        assertThat(u.held()).isEqualTo(3500);
        assertThat(u.total()).isGreaterThanOrEqualTo(3500);

        Path kept = HeldLayers.kept(layout, "ba9876543210").resolve("tree");
        Files.createDirectories(kept);
        Files.write(kept.resolve(".mcp.json"), new byte[700]);
        assertThat(HeldLayers.keptBytes(layout)).containsExactly(java.util.Map.entry("ba9876543210", 700L));
    }

    @Test
    void aRootDiskIsMeasuredAsQemuImgMeasuresIt(@TempDir Path root) throws Exception {
        SandboxLayout layout = new SandboxLayout(new HostPaths(root, root, root));
        String id = "abc123abc123";
        Path disk = layout.rootDisk(id);
        Files.createDirectories(disk.getParent());
        run("qemu-img", "create", "-q", "-f", "qcow2", disk.toString(), "4G");
        run("qemu-io", "-f", "qcow2", "-c", "write -P 5 0 6M", disk.toString());
        DiskUsage u = DiskUsage.of(layout, id, new Undo(layout.directory(id), id, m -> { }));
        var info = new com.fasterxml.jackson.databind.ObjectMapper().readTree(
                run("qemu-img", "info", "-U", "--output=json", disk.toString()));
        assertThat(u.disk()).isEqualTo(info.get("actual-size").asLong()).isGreaterThan(6L << 20);
        assertThat(u.diskVirtual()).isEqualTo(info.get("virtual-size").asLong()).isEqualTo(4 * GIB);
    }

    private static String run(String... argv) throws Exception {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(out).isZero();
        return out;
    }

    @Test
    void aNewSandboxWhoseBudgetCannotHoldItsDiskWrittenInFullIsRefusedBeforeItIsMade() {
        // a 4 GiB disk and 1 GiB of RAM: at least 5 GiB and the logs' 37 MiB
        assertThat(DiskBudget.least(4 * GIB, 1024, BUDGET)).isEqualTo(5 * GIB + (4L << 20) + (32L << 20) + (1L << 20));
        assertThatCode(() -> DiskBudget.admitSandbox(1024, BUDGET, 4 * GIB)).doesNotThrowAnyException();
        Budget five = new Budget(5 * GIB, 64, 0, 4L << 20);
        assertThatThrownBy(() -> DiskBudget.admitSandbox(1024, five, 4 * GIB))
                .isInstanceOfSatisfying(KosaException.class, e -> {
                    assertThat(e.kind()).isEqualTo(KosaException.Kind.USAGE);
                    assertThat(e.getMessage()).contains("a disk budget of 5.00 GiB cannot hold")
                            .contains("its 4.00 GiB disk written in full, a pause to disk of its 1024 MiB of RAM");
                    assertThat(e.suggestion()).contains("--disk-budget 6G or more");
                });
    }
}
