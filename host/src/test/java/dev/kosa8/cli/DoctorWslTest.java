package dev.kosa8.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kosa8 doctor} as a WSL 2 distribution on a kernel of its own sees it (WSL sets
 * {@code WSL_DISTRO_NAME} in every process; {@code dev.kosa8.host.Wsl}): it names WSL 2 and the
 * distribution, and where {@code /dev/kvm} is missing its fix is WSL's nested virtualization, not the
 * firmware's. The Windows-drive and WSL 1 cases need a mount and a kernel this host has not, and a host with
 * {@code /dev/kvm} prints no fix: {@code WslTest} and {@code MountsTest} hold those.
 */
class DoctorWslTest {
    @TempDir
    Path home;

    @Test
    void doctorUnderWsl2NamesItAndItsKvmFix() throws Exception {
        ProcessBuilder pb = new ProcessBuilder(List.of(ProcessHandle.current().info().command().orElse("java"),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                Main.class.getName(), "doctor"));
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        pb.environment().remove("JDK_JAVA_OPTIONS");
        pb.environment().put("KOSA8_HOME", home.toString());
        pb.environment().put("WSL_DISTRO_NAME", "kosa8-test");
        pb.redirectErrorStream(true);
        Path log = home.resolve("doctor.out");
        pb.redirectOutput(log.toFile()); // read once it ended: a hung doctor fails the wait, not the read
        Process p = pb.start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("kosa8 doctor did not end in 120 s; it printed:\n" + Files.readString(log));
        }
        String out = Files.readString(log, StandardCharsets.UTF_8);
        assertThat(out).containsPattern("ok +wsl +WSL 2, distribution kosa8-test, kernel \\S+: kosa8 runs as on any Linux;"
                + " closing the last WSL terminal stops the distribution");
        if (!Files.exists(Path.of("/dev/kvm"))) { // else WslTest holds the fixes; here the one doctor prints
            assertThat(out).contains("/dev/kvm is missing").contains("nestedVirtualization=true")
                    .doesNotContain("load kvm_intel");
        }
        assertThat(out).doesNotContain("on a Windows drive"); // this host's folders are no Windows drive
    }
}
