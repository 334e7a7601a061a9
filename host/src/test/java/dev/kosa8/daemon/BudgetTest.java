package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Budget}: every value too small is named at once, {@code create}'s
 * options change only what they name, and a sandbox's own budget is kept in
 * its record while a record from before budgets takes the settings' default.
 */
class BudgetTest {
    @TempDir
    Path root;

    @Test
    void everyValueTooSmallIsNamedAtOnce() {
        assertThatThrownBy(() -> new Budget(100L << 20, 0, -1, 4096))
                .isInstanceOfSatisfying(KosaException.class, e -> {
                    assertThat(e.kind()).isEqualTo(KosaException.Kind.USAGE);
                    assertThat(e.getMessage()).contains("the disk budget must be at least 256M, not 104857600 bytes")
                            .contains("at least one checkpoint, not 0")
                            .contains("the checkpoints' byte limit cannot be negative")
                            .contains("the console limit must be at least 64K, not 4096 bytes");
                });
    }

    @Test
    void aChangeReplacesOnlyTheValuesItNames() {
        Budget dflt = new Budget(32L << 30, 64, 0, 4L << 20);
        assertThat(Budget.Change.NONE.applyTo(dflt)).isEqualTo(dflt);
        assertThat(new Budget.Change(8L << 30, null, 1L << 30, null).applyTo(dflt))
                .isEqualTo(new Budget(8L << 30, 64, 1L << 30, 4L << 20));
        assertThat(new Budget.Change(null, 3, null, 256L << 10).applyTo(dflt))
                .isEqualTo(new Budget(32L << 30, 3, 0, 256L << 10));
    }

    @Test
    void aSandboxsOwnBudgetIsKeptInItsRecordAndARecordWithoutOneTakesTheDefault() {
        SandboxRecord plain = SandboxStoreTest.record("0123456789ab");
        Budget own = new Budget(8L << 30, 2, 0, 256L << 10);
        SandboxRecord budgeted = new SandboxRecord("ba9876543210", plain.created(), false, 2, 1024, "tcg", "img",
                SandboxState.RUNNING, 1234, plain.qemuStarted(), "", "", plain.network(), List.of(),
                plain.workspaceTransport(), plain.image(), own);
        SandboxStore store = new SandboxStore(root);
        store.save(plain);
        store.save(budgeted.withState(SandboxState.STOPPED));
        List<SandboxRecord> all = store.loadAll(p -> { });
        assertThat(all).hasSize(2);
        SandboxRecord loaded = all.stream().filter(r -> r.id().equals("ba9876543210")).findFirst().orElseThrow();
        assertThat(loaded.budget()).as("kept through a change of state and a save").isEqualTo(own);
        assertThat(loaded.stopped().failed("x").withQemu(1, null, "tcg", "img").budget()).isEqualTo(own);
        SandboxRecord old = all.stream().filter(r -> r.id().equals("0123456789ab")).findFirst().orElseThrow();
        assertThat(old.budget()).isNull();
        assertThat(old.budgetOr(Budget.DEFAULT)).isEqualTo(Budget.DEFAULT);
        assertThat(new MachineSpecs(new SandboxLayout(new dev.kosa8.host.HostPaths(root, root, root)),
                dev.kosa8.vm.Jail.NONE, own, dev.kosa8.vm.CheckpointMode.BACKGROUND_SNAPSHOT).budget(old)).as("the settings' default").isEqualTo(own);
    }
}
