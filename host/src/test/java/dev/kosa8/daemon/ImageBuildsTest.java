package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ImageBuildsTest {
    @Test
    void aFromIsPulledOnlyWhenItNamesARegistryOrADigest() {
        assertThat(ImageBuilds.pullsFromRegistry("ghcr.io/owner/tool:1")).isTrue();
        assertThat(ImageBuilds.pullsFromRegistry("127.0.0.1:5000/it/x:1")).isTrue();
        assertThat(ImageBuilds.pullsFromRegistry("localhost/it/x")).isTrue();
        assertThat(ImageBuilds.pullsFromRegistry("busybox@sha256:" + "a".repeat(64))).isTrue();
        assertThat(ImageBuilds.pullsFromRegistry("kosa8/debian")).isFalse();
        assertThat(ImageBuilds.pullsFromRegistry("it/never-built")).isFalse();
        assertThat(ImageBuilds.pullsFromRegistry("alpine:3.20")).isFalse();
    }
}
