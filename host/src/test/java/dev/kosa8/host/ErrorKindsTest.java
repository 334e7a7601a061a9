package dev.kosa8.host;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.client.Kosa8Exception;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The Java SDK names the same kinds of failure as the daemon and the CLI, with the same exit codes: its
 * {@code Kosa8Exception.Kind} is a copy of {@link KosaException.Kind} (the SDK depends on nothing of the host's), and
 * the daemon's error answers name a kind by its name. A kind added on one side only fails here.
 */
class ErrorKindsTest {
    @Test
    void theSdksKindsAreTheHostsByNameAndExitCode() {
        assertThat(Arrays.stream(Kosa8Exception.Kind.values()).map(k -> k.name() + "=" + k.exitCode()))
                .containsExactlyElementsOf(Arrays.stream(KosaException.Kind.values())
                        .map(k -> k.name() + "=" + k.exitCode()).toList());
    }
}
