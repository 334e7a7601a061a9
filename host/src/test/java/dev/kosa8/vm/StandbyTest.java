package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class StandbyTest {
    @Test
    void aRestoreReadsEverythingButTheKernelsCommandLine() {
        VmSpec spec = QemuCommandLineTest.spec(Accelerator.TCG);
        List<String> argv = Vm.incoming(QemuCommandLine.of(spec, "qemu"));
        VmSpec otherTsc = new VmSpec(spec.name(), spec.accelerator(), spec.cpus(), spec.memoryMiB(), spec.kernel(),
                spec.initramfs(), spec.rootDisk(), spec.kernelArgs() + " tsc_early_khz=2894563", spec.consoleLog(),
                spec.qmpSocket(), spec.agentSocket(), spec.workspaceSocket());
        assertThat(Standby.forRestore(Vm.incoming(QemuCommandLine.of(otherTsc, "qemu"))))
                .isEqualTo(Standby.forRestore(argv));
        VmSpec otherMemory = new VmSpec(spec.name(), spec.accelerator(), spec.cpus(), 2048, spec.kernel(),
                spec.initramfs(), spec.rootDisk(), spec.kernelArgs(), spec.consoleLog(), spec.qmpSocket(),
                spec.agentSocket(), spec.workspaceSocket());
        assertThat(Standby.forRestore(Vm.incoming(QemuCommandLine.of(otherMemory, "qemu"))))
                .isNotEqualTo(Standby.forRestore(argv));
        assertThat(Standby.forRestore(argv)).as("only the value after -append is masked")
                .hasSameSizeAs(argv).contains("-append", "-incoming", "defer");
    }
}
