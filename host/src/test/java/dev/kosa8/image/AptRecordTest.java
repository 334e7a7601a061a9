package dev.kosa8.image;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AptRecordTest {
    private static final String METAPACKAGE = """
            Package: linux-image-amd64
            Source: linux-signed-amd64 (6.1.192+3)
            Version: 6.1.192-3
            Installed-Size: 13
            Maintainer: Debian Kernel Team <debian-kernel@lists.debian.org>
            Architecture: amd64
            Provides: wireguard-modules (= 1.0.0)
            Depends: linux-image-6.1.0-57-amd64 (= 6.1.192-3)
            Description-en: Linux for 64-bit PCs (meta-package)
             This package depends on the latest Linux kernel and modules for use on
             PCs with AMD64, Intel 64 or VIA Nano processors.

            """;

    @Test
    void findsTheRealKernelPackageBehindTheMetapackage() {
        DebPackage kernel = AptRecord.parse(METAPACKAGE).firstDependency();

        assertThat(kernel).isEqualTo(new DebPackage("linux-image-6.1.0-57-amd64", "6.1.192-3", "amd64"));
        assertThat(kernel.fileName()).isEqualTo("linux-image-6.1.0-57-amd64_6.1.192-3_amd64.deb");
        assertThat(kernel.aptSelector()).isEqualTo("linux-image-6.1.0-57-amd64=6.1.192-3");
    }

    @Test
    void keepsContinuationLinesAndStopsAtTheFirstRecord() {
        AptRecord r = AptRecord.parse(METAPACKAGE + "Package: other\nVersion: 1\n");
        assertThat(r.field("Package")).hasValue("linux-image-amd64");
        assertThat(r.field("Description-en").orElseThrow()).contains("\nThis package depends");
    }

    @Test
    void namesTheFileApTWritesForAnEpochVersion() {
        DebPackage busybox = AptRecord.parse("""
                Package: busybox-static
                Version: 1:1.35.0-4+deb12u1+b1
                Architecture: amd64
                """).toPackage();
        assertThat(busybox.fileName()).isEqualTo("busybox-static_1%3a1.35.0-4+deb12u1+b1_amd64.deb");
    }

    @Test
    void refusesAnUnpinnedDependencyAndShellMetacharacters() {
        assertThatThrownBy(() -> AptRecord.parse("Package: m\nVersion: 1\nArchitecture: amd64\nDepends: k\n")
                .firstDependency()).hasMessageContaining("no exact version");
        assertThatThrownBy(() -> new DebPackage("x;rm", "1", "amd64")).hasMessageContaining("bad Debian package name");
    }
}
