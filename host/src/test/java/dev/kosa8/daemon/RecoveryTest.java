package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.Limits;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A daemon re-attaching to running sandboxes first lets their agents count the daemon before it gone: an agent
 * counts a host gone after {@link Limits#HOST_GONE_MILLIS} of no host, and one that hears a new Hello sooner reads
 * it on as the rest of whatever frame the daemon before was cut off in.
 */
class RecoveryTest {
    @Test
    void aDaemonThatStartedAMomentAgoWaitsUntilItsGuestsHaveCountedTheOneBeforeGone() {
        Duration left = Recovery.leftToWait(Duration.ofMillis(200));
        assertThat(left).isEqualTo(Recovery.AFTER_THE_LAST_DAEMON.minusMillis(200));
        assertThat(Recovery.AFTER_THE_LAST_DAEMON).isGreaterThan(Duration.ofMillis(Limits.HOST_GONE_MILLIS));
    }

    @Test
    void aDaemonWhoseStartTookLongerWaitsForNothing() {
        assertThat(Recovery.leftToWait(Recovery.AFTER_THE_LAST_DAEMON)).isZero();
        assertThat(Recovery.leftToWait(Duration.ofSeconds(30))).isZero();
    }
}
