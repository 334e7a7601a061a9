package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.KosaException;
import org.junit.jupiter.api.Test;

/**
 * The folder is cached in the guest by default; {@code uncached} and {@code relay} are asked for. A record or
 * a command line from while caching was opt-in ({@code cached}) means the default.
 */
class WorkspaceTransportTest {
    @Test
    void theDefaultCachesAndOnlyTheDefaultDoes() {
        assertThat(WorkspaceTransport.parse("")).isEqualTo(WorkspaceTransport.AUTO);
        assertThat(WorkspaceTransport.parse(null)).isEqualTo(WorkspaceTransport.AUTO);
        assertThat(WorkspaceTransport.AUTO.cached()).isTrue();
        assertThat(WorkspaceTransport.UNCACHED.cached()).isFalse();
        assertThat(WorkspaceTransport.RELAY.cached()).isFalse();
    }

    @Test
    void everyLabelParsesAndCachedIsTheDefaultsOldName() {
        for (WorkspaceTransport t : WorkspaceTransport.values()) {
            assertThat(WorkspaceTransport.parse(t.label())).isEqualTo(t);
            assertThat(WorkspaceTransport.parse(t.label().toUpperCase())).isEqualTo(t);
        }
        assertThat(WorkspaceTransport.parse("cached")).isEqualTo(WorkspaceTransport.AUTO);
        assertThatThrownBy(() -> WorkspaceTransport.parse("fast")).isInstanceOf(KosaException.class)
                .hasMessageContaining("unknown workspace transport 'fast'");
    }

    @Test
    void aRecordWrittenWhileCachingWasOptInReadsAsTheDefault() throws Exception {
        ObjectMapper json = new ObjectMapper();
        assertThat(json.readValue("\"CACHED\"", WorkspaceTransport.class)).isEqualTo(WorkspaceTransport.AUTO);
        assertThat(json.readValue("\"UNCACHED\"", WorkspaceTransport.class)).isEqualTo(WorkspaceTransport.UNCACHED);
        assertThat(json.writeValueAsString(WorkspaceTransport.AUTO)).isEqualTo("\"AUTO\"");
    }
}
