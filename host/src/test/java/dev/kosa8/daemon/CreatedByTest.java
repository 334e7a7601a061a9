package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Who made a sandbox ({@code createdBy}, `kosa8 ls`'s BY): bounded, kept in its record, absent in older ones. */
class CreatedByTest {
    @TempDir
    Path root;

    @Test
    void aLabelAtItsBoundIsKeptAndOneCharacterMoreOrAControlCharacterIsRefused() {
        String atBound = "mcp:" + "x".repeat(SandboxManager.CreateRequest.MAX_CREATED_BY - 4);
        assertThat(SandboxManager.CreateRequest.checkCreatedBy(atBound)).isEqualTo(atBound);
        assertThat(SandboxManager.CreateRequest.checkCreatedBy(null)).isEmpty();
        assertThatThrownBy(() -> SandboxManager.CreateRequest.checkCreatedBy(atBound + "x"))
                .isInstanceOf(KosaException.class).hasMessageContaining("at most 64");
        assertThatThrownBy(() -> SandboxManager.CreateRequest.checkCreatedBy("mcp:a\nb"))
                .hasMessageContaining("printable");
    }

    @Test
    void theRecordKeepsItThroughEveryChangeAndAnOlderRecordHasNone() throws Exception {
        SandboxStore store = new SandboxStore(root);
        SandboxRecord r = SandboxStoreTest.record("0123456789ab").withCreatedBy("mcp:claude-code");
        store.save(r.stopped().withPorts(List.of()).failed("boom"));
        store.save(SandboxStoreTest.record("ba9876543210"));
        List<SandboxRecord> all = store.loadAll(p -> { });
        assertThat(all).extracting(SandboxRecord::id, SandboxRecord::createdBy)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("0123456789ab", "mcp:claude-code"),
                        org.assertj.core.groups.Tuple.tuple("ba9876543210", ""));
    }
}
