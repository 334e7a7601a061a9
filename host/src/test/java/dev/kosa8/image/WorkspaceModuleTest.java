package dev.kosa8.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkspaceModuleTest {
    private static final DebPackage KERNEL = new DebPackage("linux-image-6.1.0-57-amd64", "6.1.192-3", "amd64");

    @Test
    void theHeadersAreTheKernelPackagesOwnVersion() {
        assertThat(WorkspaceModule.headerPackages(KERNEL)).containsExactly(
                new DebPackage("linux-headers-6.1.0-57-amd64", "6.1.192-3", "amd64"),
                new DebPackage("linux-headers-6.1.0-57-common", "6.1.192-3", "all"),
                new DebPackage("linux-kbuild-6.1", "6.1.192-3", "amd64"));
        assertThat(WorkspaceModule.headerPackages(new DebPackage("linux-image-6.12.9-arm64", "6.12.9-1", "arm64")))
                .extracting(DebPackage::name)
                .containsExactly("linux-headers-6.12.9-arm64", "linux-headers-6.12.9-common", "linux-kbuild-6.12");
        assertThatThrownBy(() -> WorkspaceModule.headerPackages(new DebPackage("busybox-static", "1.35", "amd64")))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theCompilerIsTheOneTheKernelWasBuiltWith() {
        String config = "CONFIG_CC_IS_GCC=y\nCONFIG_CC_VERSION_TEXT=\"gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0\"\n";
        assertThat(WorkspaceModule.compiler(config)).contains("gcc-12");
        assertThat(WorkspaceModule.compiler("CONFIG_CC_IS_GCC=y\n")).isEmpty();
    }

    @Test
    void theSourceShipsInTheJarAndRegistersTheKosa8Transport() {
        String c = new String(WorkspaceModule.source(), StandardCharsets.UTF_8);
        assertThat(c).contains(".name = \"kosa8\"", "module_param_string(claim", "module_param_cb(abort",
                "VIRTIO_CONSOLE_F_MULTIPORT", "MODULE_LICENSE(\"GPL\")");
    }

    @Test
    void theToolchainNamesOnlyMakeAndCompilers() {
        for (String tool : WorkspaceModule.toolchain().split(" ")) {
            if (!tool.isEmpty()) {
                assertThat(tool).matches("make|gcc(-[0-9]+)?");
            }
        }
    }

    /**
     * The real build, against headers unpacked from Debian's packages as the
     * image builder does. Needs apt, gcc-12 and make, which the project's
     * set-up installs; skipped (and said so) where they are missing.
     */
    @Test
    void buildsAgainstTheKernelPackagesHeaders(@TempDir Path tmp) throws Exception {
        List<String> tools = List.of(WorkspaceModule.toolchain().split(" "));
        assumeTrue(tools.contains("gcc-12") && tools.contains("make") && Files.isExecutable(Path.of("/usr/bin/apt-get")),
                "needs gcc-12, make and apt");
        Path debs = Path.of(System.getProperty("user.home"), ".cache", "kosa8-test-debs");
        DebianPackages apt = new DebianPackages(debs, tmp.resolve("build.log"), false);
        // the kernel an image built now would get, as the image builder picks it
        DebPackage kernel;
        try {
            kernel = apt.candidate(Recipe.STANDARD.kernelMetapackage()).firstDependency();
        } catch (RuntimeException e) {
            assumeTrue(false, "apt cannot say which kernel an image would get here: " + e.getMessage());
            return;
        }
        Path ko = tmp.resolve("kosa8_ws9p.ko");
        Optional<String> notBuilt = WorkspaceModule.build(kernel, apt, tmp.resolve("scratch"), tmp.resolve("build.log"),
                ko);
        assumeTrue(notBuilt.isEmpty() || !notBuilt.get().contains("download"),
                () -> "the header packages cannot be downloaded here: " + notBuilt.get());
        assertThat(notBuilt).as(() -> readLog(tmp.resolve("build.log"))).isEmpty();
        byte[] elf = Files.readAllBytes(ko);
        assertThat(elf).startsWith(0x7f, 'E', 'L', 'F');
        String strings = new String(elf, StandardCharsets.ISO_8859_1);
        String abi = kernel.name().substring("linux-image-".length());
        assertThat(strings).contains("vermagic=" + abi + " SMP preempt mod_unload modversions");
        assertThat(elf.length).as("stripped of debug sections").isLessThan(100_000);
    }

    private static String readLog(Path log) {
        try {
            return Files.readString(log);
        } catch (Exception e) {
            return "(no log)";
        }
    }
}
