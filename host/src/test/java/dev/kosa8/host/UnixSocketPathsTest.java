package dev.kosa8.host;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class UnixSocketPathsTest {
    @Test
    void linuxHoldsOneHundredAndSevenBytesAndMacosOneHundredAndThree() {
        assertThat(UnixSocketPaths.maxBytes("Linux")).isEqualTo(107);
        assertThat(UnixSocketPaths.maxBytes("Mac OS X")).isEqualTo(103);
        assertThat(UnixSocketPaths.maxBytes("Darwin")).isEqualTo(103);
        assertThat(UnixSocketPaths.MAX_BYTES).isEqualTo(107); // this suite runs on Linux
    }
}
