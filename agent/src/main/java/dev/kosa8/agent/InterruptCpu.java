package dev.kosa8.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalInt;

/**
 * The CPU that takes a virtio device's interrupts, so that the threads which
 * wait for that device can run there.
 *
 * <p>Why it matters: a thread woken by an interrupt on another CPU costs an
 * inter-processor interrupt and a wake-up of that CPU, and under TCG each
 * vCPU is a host thread that must be woken in turn. The workspace relay's two
 * threads wake several times per 9p request (a reply arrives, the port's
 * write completes); measured in a guest (bench/history/workspace.md, run 4),
 * pinned to the port's interrupt CPU they made a {@code stat} of a shared
 * file 25% faster (median of six alternating pairs) and its function-call
 * interrupts fell from 8.2 to 0.4 per call. The guest runs no irqbalance, so
 * the interrupt stays where the kernel put it.
 */
final class InterruptCpu {
    private InterruptCpu() {
    }

    /**
     * The CPU taking the interrupts of the virtio device behind the port
     * {@code /dev/NAME} (found through {@code /sys/class/virtio-ports/NAME/device}),
     * if the guest says.
     */
    static OptionalInt ofPort(Path portDevice) {
        try {
            Path device = VirtioPort.SYSFS.resolve(portDevice.getFileName().toString()).resolve("device").toRealPath();
            OptionalInt irq = irqOf(Files.readString(Path.of("/proc/interrupts")), device.getFileName().toString());
            if (irq.isEmpty()) {
                return OptionalInt.empty();
            }
            Path affinity = Path.of("/proc/irq", Integer.toString(irq.getAsInt()), "effective_affinity_list");
            return firstCpu(Files.readString(affinity));
        } catch (IOException | RuntimeException e) {
            return OptionalInt.empty();
        }
    }

    /**
     * The interrupt line of {@code device} (such as {@code virtio3}) in the text of
     * {@code /proc/interrupts}: the first line whose last word is the device's name,
     * or starts with it and a hyphen (a device with one vector per queue names each
     * {@code virtio3-input.0} and so on).
     */
    static OptionalInt irqOf(String procInterrupts, String device) {
        for (String line : procInterrupts.split("\n")) {
            String[] words = line.trim().split("\\s+");
            if (words.length < 2 || !words[0].endsWith(":")) {
                continue;
            }
            String name = words[words.length - 1];
            if (name.equals(device) || name.startsWith(device + "-")) {
                try {
                    return OptionalInt.of(Integer.parseInt(words[0].substring(0, words[0].length() - 1)));
                } catch (NumberFormatException e) {
                    return OptionalInt.empty(); // a named row (LOC:, RES:...) is no device's line
                }
            }
        }
        return OptionalInt.empty();
    }

    /** The first CPU of a kernel CPU list such as {@code 0}, {@code 2-3} or {@code 1,4-5}. */
    static OptionalInt firstCpu(String cpuList) {
        String first = cpuList.trim().split("[,-]", 2)[0];
        try {
            int cpu = Integer.parseInt(first);
            return cpu >= 0 ? OptionalInt.of(cpu) : OptionalInt.empty();
        } catch (NumberFormatException e) {
            return OptionalInt.empty();
        }
    }
}
