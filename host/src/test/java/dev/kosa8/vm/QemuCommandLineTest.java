package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class QemuCommandLineTest {
    static VmSpec spec(Accelerator accel) {
        return new VmSpec("abc123abc123", accel, 2, 1024, Path.of("/img/vmlinux"), Path.of("/img/initramfs.cpio"),
                Path.of("/data/a,b/root.qcow2"), "console=ttyS0 quiet", Path.of("/data/console.log"),
                Path.of("/run/k/qmp.sock"), Path.of("/run/k/agent.sock"), Path.of("/run/k/ws9p.sock"));
    }

    @Test
    void theWorkspaceGetsItsOwnPortOnlyWhenThereIsOne() {
        String with = String.join(" ", QemuCommandLine.of(spec(Accelerator.TCG), "qemu"));
        assertThat(with).contains("-chardev socket,id=ws9p,path=/run/k/ws9p.sock,server=on,wait=off")
                .contains("virtio-serial-device,id=ws9pbus,max_ports=2")
                .contains("virtserialport,bus=ws9pbus.0,chardev=ws9p,name=dev.kosa8.ws9p")
                .contains("-drive id=ws9pwin,file=/run/k/ws9p.window,format=raw,if=none,readonly=on,file.locking=off")
                .contains("-device virtio-blk-device,drive=ws9pwin,serial=kosa8-ws9p-window")
                .contains("-drive id=ws9pwr,file=/run/k/ws9p.writes,format=raw,if=none,file.locking=off ")
                .contains("-device virtio-blk-device,drive=ws9pwr,serial=kosa8-ws9p-writes");
        VmSpec s = spec(Accelerator.TCG);
        VmSpec without = new VmSpec(s.name(), s.accelerator(), s.cpus(), s.memoryMiB(), s.kernel(), s.initramfs(),
                s.rootDisk(), s.kernelArgs(), s.consoleLog(), s.qmpSocket(), s.agentSocket(), null);
        assertThat(String.join(" ", QemuCommandLine.of(without, "qemu"))).doesNotContain("ws9p");
    }

    @Test
    void aMachineWhoseRamIsAFileMapsItSharedUnderTheRamBlocksOwnName() {
        VmSpec s = spec(Accelerator.TCG).withMemoryFile(Path.of("/data/sb/memory/a,b"));
        List<String> argv = QemuCommandLine.of(s, "qemu");
        assertThat(argv).containsSequence("-M", "microvm,x-option-roms=off,rtc=on,memory-backend=microvm.ram")
                .containsSequence("-object",
                        "memory-backend-file,id=microvm.ram,size=1024M,mem-path=/data/sb/memory/a,,b,share=on")
                .containsSequence("-m", "1024M");
        assertThat(String.join(" ", QemuCommandLine.of(spec(Accelerator.TCG), "qemu")))
                .as("QEMU's own memory otherwise").doesNotContain("memory-backend");
    }

    @Test
    void anArm64GuestRunsOnVirtWithItsOwnEmulatorCpuRamBlockAndARootDiskFoundBySerial() {
        VmSpec s = spec(Accelerator.TCG).withArch(GuestArch.ARM64);
        List<String> argv = QemuCommandLine.of(s, "/usr/bin/qemu-system-x86_64");
        assertThat(argv.getFirst()).as("the host's emulator is not the guest's").endsWith("qemu-system-aarch64");
        assertThat(argv).containsSequence("-M", "virt,gic-version=max").containsSequence("-cpu", "max,pauth=off")
                .contains("virtio-blk-device,drive=root,serial=" + QemuCommandLine.ROOT_SERIAL)
                .doesNotContain("microvm,x-option-roms=off,rtc=on");
        assertThat(QemuCommandLine.of(s.withMemoryFile(Path.of("/m")), "q"))
                .containsSequence("-M", "virt,gic-version=max,memory-backend=mach-virt.ram")
                .containsSequence("-object", "memory-backend-file,id=mach-virt.ram,size=1024M,mem-path=/m,share=on");
        assertThat(QemuCommandLine.of(s.withArch(GuestArch.AMD64), "q")).as("x-86's machine is as it was")
                .contains("virtio-blk-device,drive=root").containsSequence("-M", "microvm,x-option-roms=off,rtc=on");
        VmSpec kvm = spec(Accelerator.KVM).withArch(GuestArch.ARM64);
        assertThat(QemuCommandLine.of(kvm, "q")).containsSequence("-cpu", "host");
    }

    @Test
    void theQmpSocketIsReadBackFromTheArgumentsCommasAndAll() {
        VmSpec s = spec(Accelerator.TCG);
        VmSpec odd = new VmSpec(s.name(), s.accelerator(), s.cpus(), s.memoryMiB(), s.kernel(), s.initramfs(),
                s.rootDisk(), s.kernelArgs(), s.consoleLog(), Path.of("/run/a,,b,c/alt/qmp.sock"), s.agentSocket(),
                null);
        for (VmSpec spec : List.of(s, odd)) {
            List<String> argv = QemuCommandLine.of(spec, "qemu");
            String[] arguments = argv.subList(1, argv.size()).toArray(String[]::new);
            assertThat(QemuCommandLine.qmpSocket(arguments)).contains(spec.qmpSocket());
        }
        assertThat(QemuCommandLine.qmpSocket(new String[] {"-qmp", "tcp:localhost:4444"})).isEmpty();
        assertThat(QemuCommandLine.qmpSocket(new String[] {"-m", "1G", "-qmp"})).isEmpty();
    }

    @Test
    void buildsAMicrovmWithNoNetworkAndTheAgentPort() {
        List<String> argv = QemuCommandLine.of(spec(Accelerator.TCG), "qemu-system-x86_64");
        String joined = String.join(" ", argv);
        assertThat(argv.getFirst()).isEqualTo("qemu-system-x86_64");
        assertThat(joined).contains("-M microvm").contains("-accel tcg").contains("-cpu max,-erms,-fsrm")
                .contains("-smp 2").contains("-m 1024M").contains("-nodefaults").contains("-no-reboot")
                .contains("virtserialport,bus=agentbus.0,chardev=agent,name=dev.kosa8.agent")
                .contains("-qmp unix:/run/k/qmp.sock,server=on,wait=off")
                .contains("-sandbox on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny");
        assertThat(joined).as("no network device of any kind").doesNotContain("-netdev").doesNotContain("-nic")
                .doesNotContain("virtio-net");
        assertThat(joined).as("ACPI stays on: the kernel finds virtio-mmio through it").doesNotContain("acpi=off");
    }

    @Test
    void aNetworkIsAPortOfItsOwnNeverANetworkDeviceAndTheFilterStaysStrict() {
        VmSpec s = spec(Accelerator.TCG);
        VmSpec with = new VmSpec(s.name(), s.accelerator(), s.cpus(), s.memoryMiB(), s.kernel(), s.initramfs(),
                s.rootDisk(), s.kernelArgs(), s.consoleLog(), s.qmpSocket(), s.agentSocket(), null,
                Path.of("/run/k,1/net.sock"));
        List<String> argv = QemuCommandLine.of(with, "qemu");
        assertThat(argv).containsSequence("-chardev", "socket,id=net,path=/run/k,,1/net.sock,server=on,wait=off");
        assertThat(argv).containsSequence("-device", "virtio-serial-device,id=netbus,max_ports=2");
        assertThat(argv).containsSequence("-device", "virtserialport,bus=netbus.0,chardev=net,name=dev.kosa8.net");
        // the network window: a disk the guest can only read, whatever it asks of it
        assertThat(argv).containsSequence("-drive",
                "id=netwin,file=/run/k,,1/net.window,format=raw,if=none,readonly=on,file.locking=off");
        assertThat(argv).containsSequence("-device", "virtio-blk-device,drive=netwin,serial=kosa8-net-window");
        VmSpec both = new VmSpec(s.name(), s.accelerator(), s.cpus(), s.memoryMiB(), s.kernel(), s.initramfs(),
                s.rootDisk(), s.kernelArgs(), s.consoleLog(), s.qmpSocket(), s.agentSocket(), s.workspaceSocket(),
                Path.of("/run/k/net.sock"));
        String all = String.join(" ", QemuCommandLine.of(both, "qemu"));
        assertThat(all.indexOf("drive=netwin")).as("after every device before it, so they keep their transports")
                .isGreaterThan(all.indexOf("drive=ws9pwr")).isGreaterThan(0);
        assertThat(argv).as("QEMU starts nothing for the network: every seccomp group stays denied")
                .containsSequence("-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny");
        String joined = String.join(" ", argv);
        assertThat(joined).doesNotContain("-netdev").doesNotContain("-nic").doesNotContain("virtio-net")
                .doesNotContain("guestfwd").doesNotContain("hostfwd").doesNotContain("socat").doesNotContain("=allow");
        assertThat(String.join(" ", QemuCommandLine.of(s, "qemu"))).as("no network: no port for it")
                .doesNotContain("dev.kosa8.net").doesNotContain("netbus");
    }

    @Test
    void escapesCommasInPaths() {
        List<String> argv = QemuCommandLine.of(spec(Accelerator.KVM), "qemu");
        assertThat(argv).contains("id=root,file=/data/a,,b/root.qcow2,format=qcow2,if=none,discard=unmap,detect-zeroes=unmap");
        assertThat(argv).containsSequence("-accel", "kvm");
    }

    @Test
    void validationNamesEveryBadField() {
        assertThatThrownBy(() -> new VmSpec("x", Accelerator.TCG, 0, 16, Path.of("/k"), Path.of("/i"), Path.of("/d"),
                "", Path.of("/c"), Path.of("/" + "s".repeat(120)), Path.of("/a"), null))
                .isInstanceOf(KosaException.class)
                .hasMessageContaining("cpus must be between 1 and 64")
                .hasMessageContaining("memory must be at least 256 MiB")
                .hasMessageContaining("longer than a unix socket allows");
    }

    @Test
    void tscFrequencyComesFromCpuinfoOnlyWithAConstantTsc(@org.junit.jupiter.api.io.TempDir Path tmp) throws Exception {
        Path cpuinfo = tmp.resolve("cpuinfo");
        java.nio.file.Files.writeString(cpuinfo, "cpu MHz\t\t: 2445.430\nflags\t\t: fpu constant_tsc nonstop_tsc\n");
        assertThat(TscFrequency.fromCpuinfo(cpuinfo)).hasValue(2445430);
        java.nio.file.Files.writeString(cpuinfo, "cpu MHz\t\t: 2445.430\nflags\t\t: fpu\n");
        assertThat(TscFrequency.fromCpuinfo(cpuinfo)).isEmpty();
        assertThat(TscFrequency.kernelArg(Accelerator.KVM)).isEmpty();
    }

    @Test
    void aTcgGuestKeepsTheTscAsItsClock() {
        // TCG's vCPUs all read the host's counter; without the word the guest's kernel falls back to jiffies
        assertThat(TscFrequency.kernelArg(Accelerator.TCG)).endsWith(" tsc=reliable");
    }
}
