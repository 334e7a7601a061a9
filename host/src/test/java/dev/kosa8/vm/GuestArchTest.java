package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import org.junit.jupiter.api.Test;

class GuestArchTest {
    @Test
    void debiansAndUnamesNamesAreTakenAndAnythingElseIsRefusedNamingBoth() {
        assertThat(GuestArch.parse("arm64")).isEqualTo(GuestArch.ARM64);
        assertThat(GuestArch.parse(" AArch64 ")).isEqualTo(GuestArch.ARM64);
        assertThat(GuestArch.parse("amd64")).isEqualTo(GuestArch.AMD64);
        assertThat(GuestArch.parse("x86_64")).isEqualTo(GuestArch.AMD64);
        assertThatThrownBy(() -> GuestArch.parse("riscv64")).isInstanceOf(KosaException.class)
                .hasMessageContaining("unknown architecture 'riscv64'")
                .satisfies(e -> assertThat(((KosaException) e).suggestion()).contains("amd64, arm64"));
    }

    @Test
    void anX8664GuestOnAnArm64HostIsRefusedSayingWhy() {
        assertThat(GuestArch.host().requireRunnableHere()).isEqualTo(GuestArch.host());
        assertThat(GuestArch.ARM64.requireRunnableHere()).isEqualTo(GuestArch.ARM64); // on this x86-64 host
        if (GuestArch.host() == GuestArch.ARM64) {
            assertThatThrownBy(GuestArch.AMD64::requireRunnableHere).hasMessageContaining("not supported yet");
        }
    }

    @Test
    void theJvmsArchitectureNamesMapToTheGuests() {
        assertThat(GuestArch.ofJvm("amd64")).isEqualTo(GuestArch.AMD64);
        assertThat(GuestArch.ofJvm("aarch64")).isEqualTo(GuestArch.ARM64);
        assertThat(GuestArch.host().foreign()).isFalse();
    }

    @Test
    void eachMachineHasItsConsoleRamBlockAndArguments() {
        assertThat(GuestArch.AMD64.consoleDevice()).isEqualTo("ttyS0");
        assertThat(GuestArch.ARM64.consoleDevice()).isEqualTo("ttyAMA0");
        assertThat(GuestArch.AMD64.ramBlock()).isEqualTo("microvm.ram");
        assertThat(GuestArch.ARM64.ramBlock()).isEqualTo("mach-virt.ram");
        assertThat(GuestArch.ARM64.kernelArgs(Accelerator.TCG)).as("no TSC on arm64").isEmpty();
        assertThat(GuestArch.AMD64.kernelArgs(Accelerator.KVM)).isEmpty();
        assertThat(GuestArch.AMD64.cpuModel(Accelerator.TCG)).isEqualTo(Accelerator.TCG.cpuModel());
        assertThat(GuestArch.ARM64.cpuModel(Accelerator.HVF)).isEqualTo("host");
        assertThat(GuestArch.ARM64.qemuProgram()).isEqualTo("qemu-system-aarch64");
    }
}
