package dev.kosa8.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class InterruptCpuTest {
    /** As a microvm guest of two vCPUs shows it (trimmed): one line per virtio-mmio device. */
    private static final String MICROVM = """
                       CPU0       CPU1
              0:         31          0   IO-APIC   2-edge      timer
             49:          0       1071   IO-APIC  23-fasteoi   virtio0
             51:          0       1713   IO-APIC  21-fasteoi   virtio2
             52:         14          0   IO-APIC  20-fasteoi   virtio3
             55:        873          0   IO-APIC   4-edge      ttyS0
            NMI:          0          0   Non-maskable interrupts
            LOC:       4063       4083   Local timer interrupts
            ERR:          0
            """;

    @Test
    void findsTheLineOfTheDeviceByItsLastWord() {
        assertThat(InterruptCpu.irqOf(MICROVM, "virtio3")).hasValue(52);
        assertThat(InterruptCpu.irqOf(MICROVM, "virtio0")).hasValue(49);
    }

    @Test
    void aDeviceNamePrefixOfAnotherDoesNotMatchIt() {
        String withTen = MICROVM.replace("virtio0", "virtio10");
        assertThat(InterruptCpu.irqOf(withTen, "virtio1")).isEmpty();
        assertThat(InterruptCpu.irqOf(withTen, "virtio10")).hasValue(49);
    }

    @Test
    void aDeviceWithAVectorPerQueueIsFoundByItsFirstVector() {
        String msix = """
                            CPU0       CPU1
                 24:          0          0   PCI-MSI 49152-edge      virtio3-config
                 25:        120          0   PCI-MSI 49153-edge      virtio3-input.0
                """;
        assertThat(InterruptCpu.irqOf(msix, "virtio3")).hasValue(24);
    }

    @Test
    void namedRowsAndAbsentDevicesGiveNothing() {
        assertThat(InterruptCpu.irqOf(MICROVM, "virtio7")).isEmpty();
        assertThat(InterruptCpu.irqOf(MICROVM, "interrupts")).isEmpty();
        assertThat(InterruptCpu.irqOf("", "virtio3")).isEmpty();
    }

    @Test
    void takesTheFirstCpuOfAList() {
        assertThat(InterruptCpu.firstCpu("0\n")).hasValue(0);
        assertThat(InterruptCpu.firstCpu("2-3")).hasValue(2);
        assertThat(InterruptCpu.firstCpu("1,4-5")).hasValue(1);
        assertThat(InterruptCpu.firstCpu("\n")).isEqualTo(OptionalInt.empty());
        assertThat(InterruptCpu.firstCpu("x")).isEmpty();
    }
}
