package dev.kosa8.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.egress.NetMode;
import dev.kosa8.egress.SandboxNetwork;
import dev.kosa8.host.HostPaths;
import dev.kosa8.vm.CheckpointMode;
import dev.kosa8.vm.Jail;
import dev.kosa8.vm.QemuCommandLine;
import dev.kosa8.vm.VmSpec;
import dev.kosa8.vm.WorkspaceTransport;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The QEMU a sandbox gets for each of its network modes, as the daemon builds it, and the jail it runs in. */
class MachineSpecsTest {
    @TempDir
    Path home;

    @ParameterizedTest
    @EnumSource(NetMode.class)
    void qemuRunsUnderTheStrictSeccompFilterWithNoNetworkDeviceWhateverTheNetwork(NetMode mode) {
        Jail jail = new Jail(Path.of("/usr/bin/bwrap"), true, false, List.of(new Jail.SystemPath(Path.of("/usr"),
                null)), false, "", "");
        SandboxLayout layout = new SandboxLayout(new HostPaths(home.resolve("data"), home.resolve("cache"),
                home.resolve("run")));
        SandboxRecord r = new SandboxRecord("abcdef012345", Instant.now(), false, 2, 1024, "tcg", "img",
                SandboxState.STARTING, 0, null, "", "", new SandboxNetwork(mode, List.of("api.test")), List.of(),
                WorkspaceTransport.AUTO);
        BootImage image = new BootImage("img", Path.of("/img/vmlinux"), Path.of("/img/initramfs"),
                Path.of("/img/root.qcow2"), "console=ttyS0");
        VmSpec spec = new MachineSpecs(layout, jail, Budget.DEFAULT, CheckpointMode.BACKGROUND_SNAPSHOT).of(r, image);
        List<String> argv = QemuCommandLine.of(spec, "qemu-system-x86_64");
        String run = layout.runtime(r.id()).toString();
        String jailed = String.join(" ", jail.wrap(spec, List.of(), List.of(layout.runtime(r.id()).resolve("net")), argv));
        assertThat(jailed).as("--net %s: the machine's folder, the network link's socket in it, read-write", mode.label())
                .contains("--bind " + run + " " + run + " ");
        assertThat(jailed).as("--net %s: the broker's folder covered, no relay shown", mode.label())
                .contains("--tmpfs " + run + "/net ").doesNotContain("-bind " + run + "/net")
                .doesNotContain("socat");
        String joined = String.join(" ", argv);
        assertThat(argv).as("--net %s", mode.label()).containsSequence("-sandbox",
                "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny");
        assertThat(joined).as("--net %s", mode.label()).doesNotContain("spawn=allow", "elevateprivileges=allow",
                "-netdev", "-nic ", "virtio-net", "guestfwd", "socat");
        if (mode == NetMode.NONE) {
            assertThat(spec.netSocket()).isNull();
            assertThat(joined).doesNotContain("dev.kosa8.net").doesNotContain("kosa8.net=1");
        } else {
            assertThat(spec.netSocket()).isEqualTo(layout.runtime(r.id()).resolve("net.sock"));
            assertThat(joined).contains("virtserialport,bus=netbus.0,chardev=net,name=dev.kosa8.net")
                    .contains("kosa8.net=1");
        }
    }

    @org.junit.jupiter.api.Test
    void inFileRamModeEachMachineDirectoryHasItsOwnMemoryFileAndAStateSavedSoGetsOneInEitherMode() {
        SandboxLayout layout = new SandboxLayout(new HostPaths(home.resolve("data"), home.resolve("cache"),
                home.resolve("run")));
        SandboxRecord r = new SandboxRecord("abcdef012345", Instant.now(), false, 2, 1024, "tcg", "img",
                SandboxState.STARTING, 0, null, "", "", new SandboxNetwork(NetMode.NONE, List.of()), List.of(),
                WorkspaceTransport.AUTO);
        BootImage image = new BootImage("img", Path.of("/img/vmlinux"), Path.of("/img/initramfs"),
                Path.of("/img/root.qcow2"), "console=ttyS0");
        MachineSpecs fileRam = new MachineSpecs(layout, Jail.NONE, Budget.DEFAULT, CheckpointMode.FILE_RAM);
        Path main = fileRam.of(r, image).memoryFile();
        Path alt = fileRam.of(r, image, layout.runtime(r.id()).resolve(SandboxLayout.ALT)).memoryFile();
        assertThat(main).isEqualTo(layout.directory(r.id()).resolve("memory/main"));
        assertThat(alt).isEqualTo(layout.directory(r.id()).resolve("memory/alt"));
        assertThat(main.startsWith(layout.runtime(r.id()))).as("never in the runtime directory (a small tmpfs)")
                .isFalse();

        MachineSpecs background = new MachineSpecs(layout, Jail.NONE, Budget.DEFAULT,
                CheckpointMode.BACKGROUND_SNAPSHOT);
        VmSpec plain = background.of(r, image, layout.runtime(r.id()).resolve(SandboxLayout.ALT));
        assertThat(plain.memoryFile()).isNull();
        dev.kosa8.vm.FileRamMachine saved = new dev.kosa8.vm.FileRamMachine(Path.of("/c/x.vmstate"),
                Path.of("/c/x.memory"));
        assertThat(background.forState(r.id(), plain, saved).memoryFile()).as("a file-RAM state gets its file back")
                .isEqualTo(alt);
        assertThat(background.forState(r.id(), plain, dev.kosa8.vm.SavedMachine.file(Path.of("/c/y.vmstate"))))
                .as("any other state loads into either kind").isSameAs(plain);
    }
}
