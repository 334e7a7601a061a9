package dev.kosa8.vm;

import dev.kosa8.protocol.NetLink;
import dev.kosa8.protocol.Ws9p;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds the QEMU argv for a sandbox: a pure function of {@link VmSpec},
 * tested without QEMU.
 *
 * <p>Choices, each for a reason:
 * <ul>
 *   <li>{@code -M microvm}: no PCI, no firmware, no legacy devices; virtio over
 *       MMIO; boots an uncompressed PVH kernel directly (loading the xz-compressed
 *       {@code vmlinuz} costs seconds more under TCG). ACPI stays on: it is
 *       how Debian's kernel finds the virtio-mmio devices (its virtio_mmio
 *       has no {@code device=} parameter), and how {@code poweroff} ends QEMU.</li>
 *   <li>{@code -nodefaults -no-user-config}: nothing the user's QEMU config adds;
 *       every device is listed here.</li>
 *   <li>No network device, ever. A sandbox's network is a virtio-serial port
 *       ({@link NetLink#PORT_NAME}) on a device of its own, whose socket the
 *       daemon joins to the egress broker: the guest's agent carries each
 *       connection to the broker's address over it as a stream. QEMU starts
 *       nothing per connection and holds no network stack, so the seccomp
 *       filter denies every group in every configuration.</li>
 *   <li>{@code virtio-rng}: the guest's entropy comes from the host, so early
 *       {@code getrandom()} never blocks under TCG.</li>
 *   <li>{@code -sandbox on,...=deny}: QEMU's seccomp filter; the process
 *       cannot gain privileges, start programs, change scheduling or use
 *       obsolete system calls. (A first trial that seemed to show the filter
 *       stopping boots was the guest kernel's TSC calibration hang, see
 *       {@link TscFrequency}, not the filter.)</li>
 *   <li>The workspace's 9p traffic has a port of its own, on a virtio-serial
 *       device of its own, so bulk file I/O never queues behind exec output,
 *       and its interrupts do not wake the agent's reader: on microvm a
 *       virtio-serial device has one interrupt for all its ports, and sharing
 *       one cost the guest 20–50% of its CPU in small-file work (measured,
 *       bench/history/workspace.md, "What was attacked").</li>
 *   <li>The agent's, the workspace's and the network's ports and QMP are unix sockets that QEMU listens on
 *       ({@code server=on,wait=off}), so the daemon can reconnect after its own
 *       restart.</li>
 *   <li>The serial console is a unix socket QEMU listens on too, which the daemon reads into a log it keeps
 *       within its limit ({@link ConsolePump}, {@link ConsoleLog}); while no daemon reads it, QEMU drops
 *       what the guest writes rather than holding the guest up, and nothing grows on the host. QEMU itself
 *       writes no file but its disk.</li>
 * </ul>
 */
public final class QemuCommandLine {
    public static final String AGENT_PORT_NAME = "dev.kosa8.agent";
    /** The serial number an arm64 guest's root disk carries, by which its init finds it. */
    public static final String ROOT_SERIAL = "kosa8-root";
    /**
     * QEMU's seccomp filter, for every machine, with a network or without: no obsolete system calls, no privilege
     * changes, no new programs, no resource control.
     */
    public static final String SECCOMP = "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny";

    private QemuCommandLine() {
    }

    /**
     * The command line of {@code spec}'s machine; {@code qemuBinary} is the host architecture's emulator, and a
     * guest of another architecture ({@link GuestArch#foreign}) gets its own emulator from PATH.
     */
    public static List<String> of(VmSpec spec, String qemuBinary) {
        List<String> a = new ArrayList<>();
        a.add(spec.arch().foreign() ? QemuBinary.find(spec.arch()) : qemuBinary);
        a.addAll(List.of("-name", "kosa8-" + spec.name() + ",process=kosa8-" + spec.name()));
        String ram = spec.arch().ramBlock();
        if (spec.memoryFile() == null) {
            a.addAll(List.of("-M", spec.arch().machine(null)));
        } else {
            // RAM in a file both QEMU and the daemon can reach (CheckpointMode.FILE_RAM). The backend takes the name
            // of the machine's own RAM block, so every kept state loads into either kind of machine
            a.addAll(List.of("-M", spec.arch().machine(ram)));
            a.addAll(List.of("-object", "memory-backend-file,id=" + ram + ",size=" + spec.memoryMiB()
                    + "M,mem-path=" + escape(spec.memoryFile().toString()) + ",share=on"));
        }
        a.addAll(List.of("-accel", spec.accelerator().qemuName()));
        a.addAll(List.of("-cpu", spec.arch().cpuModel(spec.accelerator())));
        a.addAll(List.of("-smp", String.valueOf(spec.cpus())));
        a.addAll(List.of("-m", spec.memoryMiB() + "M"));
        a.addAll(List.of("-nodefaults", "-no-user-config", "-display", "none", "-no-reboot"));
        a.addAll(List.of("-sandbox", SECCOMP));
        a.addAll(List.of("-chardev", "socket,id=console,path=" + escape(spec.consoleSocket().toString())
                + ",server=on,wait=off"));
        a.addAll(List.of("-serial", "chardev:console"));
        a.addAll(List.of("-kernel", spec.kernel().toString()));
        a.addAll(List.of("-initrd", spec.initramfs().toString()));
        a.addAll(List.of("-append", spec.kernelArgs()));
        a.addAll(List.of("-drive", "id=root,file=" + escape(spec.rootDisk().toString())
                + ",format=qcow2,if=none,discard=unmap,detect-zeroes=unmap"));
        // virt gives a device its virtio-mmio transport in an order the guest's probe does not keep, so an arm64
        // guest's init finds its root disk by this serial number rather than as the first disk (init.sh)
        a.addAll(List.of("-device", "virtio-blk-device,drive=root"
                + (spec.arch() == GuestArch.ARM64 ? ",serial=" + ROOT_SERIAL : "")));
        a.addAll(List.of("-device", "virtio-rng-device"));
        a.addAll(List.of("-device", "virtio-serial-device,id=agentbus,max_ports=2"));
        a.addAll(List.of("-chardev", "socket,id=agent,path=" + escape(spec.agentSocket().toString()) + ",server=on,wait=off"));
        a.addAll(List.of("-device", "virtserialport,bus=agentbus.0,chardev=agent,name=" + AGENT_PORT_NAME));
        if (spec.workspaceSocket() != null) {
            a.addAll(List.of("-chardev", "socket,id=ws9p,path=" + escape(spec.workspaceSocket().toString())
                    + ",server=on,wait=off"));
            a.addAll(List.of("-device", "virtio-serial-device,id=ws9pbus,max_ports=2"));
            a.addAll(List.of("-device", "virtserialport,bus=ws9pbus.0,chardev=ws9p,name=" + Ws9p.PORT_NAME));
            // large reads' data, past the port's 4 KiB pieces: read-only for the guest, written only by the daemon
            // (its own scratch file, so no image locking), through the host's page cache like the daemon's writes
            a.addAll(List.of("-drive", "id=ws9pwin,file=" + escape(spec.workspaceWindow().toString())
                    + ",format=raw,if=none,readonly=on,file.locking=off"));
            a.addAll(List.of("-device", "virtio-blk-device,drive=ws9pwin,serial=" + Ws9p.READ_WINDOW_SERIAL));
        }
        if (spec.netSocket() != null) {
            // a device of its own, like the workspace's: a download's interrupts never wake the agent's reader
            a.addAll(List.of("-chardev", "socket,id=net,path=" + escape(spec.netSocket().toString())
                    + ",server=on,wait=off"));
            a.addAll(List.of("-device", "virtio-serial-device,id=netbus,max_ports=2"));
            a.addAll(List.of("-device", "virtserialport,bus=netbus.0,chardev=net,name=" + NetLink.PORT_NAME));
        }
        if (spec.workspaceSocket() != null) {
            // large writes' data, past the port's 32 KiB pieces: written by the guest, read only by the daemon; the
            // host's page cache between them (QEMU's writes complete into it, the daemon reads from it). Last, so
            // the devices before it keep the virtio-mmio transports they had before it was added
            a.addAll(List.of("-drive", "id=ws9pwr,file=" + escape(spec.workspaceWrites().toString())
                    + ",format=raw,if=none,file.locking=off"));
            a.addAll(List.of("-device", "virtio-blk-device,drive=ws9pwr,serial=" + Ws9p.WRITE_WINDOW_SERIAL));
        }
        if (spec.netSocket() != null) {
            // a stream's larger pieces towards the guest, past the port's 4 KiB reads: read-only for the guest,
            // written only by the daemon (dev.kosa8.egress.NetWindow). Last, for the same reason as the one before
            a.addAll(List.of("-drive", "id=netwin,file=" + escape(spec.netWindow().toString())
                    + ",format=raw,if=none,readonly=on,file.locking=off"));
            a.addAll(List.of("-device", "virtio-blk-device,drive=netwin,serial=" + NetLink.WINDOW_SERIAL));
        }
        a.addAll(List.of("-qmp", "unix:" + escape(spec.qmpSocket().toString()) + ",server=on,wait=off"));
        return List.copyOf(a);
    }

    /**
     * The QMP socket a QEMU command line built by {@link #of} names (its
     * arguments, without the program), read back: how a restarted daemon
     * finds which directory a running QEMU keeps its sockets in.
     */
    public static java.util.Optional<java.nio.file.Path> qmpSocket(String[] arguments) {
        for (int i = 0; i + 1 < arguments.length; i++) {
            String value = arguments[i + 1];
            if (arguments[i].equals("-qmp") && value.startsWith("unix:")) {
                // the path ends at the first comma that is not doubled
                StringBuilder path = new StringBuilder();
                for (int k = "unix:".length(); k < value.length(); k++) {
                    char c = value.charAt(k);
                    if (c == ',') {
                        if (k + 1 < value.length() && value.charAt(k + 1) == ',') {
                            k++;
                        } else {
                            break;
                        }
                    }
                    path.append(c);
                }
                return java.util.Optional.of(java.nio.file.Path.of(path.toString()));
            }
        }
        return java.util.Optional.empty();
    }

    /** QEMU option values separate fields with commas; a literal comma is written twice. */
    static String escape(String value) {
        return value.replace(",", ",,");
    }
}
