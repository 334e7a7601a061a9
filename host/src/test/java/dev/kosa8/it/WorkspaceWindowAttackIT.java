package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Attacks from inside the guest, as root, on the relay's two windows, the
 * virtio-blk disks that carry large reads' and writes' data past the port:
 * the guest cannot write the read window, nor grow the write window or reach
 * the host through it. The windows are attached to every sandbox, but only
 * the relay uses them, so the sandbox here relays ({@code
 * --workspace-transport relay}) and the read window's test can first see a
 * read go through it. The canary of {@link WorkspaceAttackIT}, checked after
 * each attack.
 */
@ExtendWith(SharedSandbox.class)
@SharedSandbox.CreateArgs({"--workspace-transport", "relay"})
class WorkspaceWindowAttackIT {
    private static HostCanary canary;

    @BeforeAll
    static void plantCanary() throws Exception {
        canary = HostCanary.plant("outside-canary-windows");
    }

    @AfterAll
    static void removeCanary() throws Exception {
        canary.remove();
    }

    private static void assertHostUntouched() throws Exception {
        canary.assertUntouched();
    }

    @Test
    void theReadWindowCannotBeWrittenFromTheGuest(SharedSandbox.Booted box) throws Exception {
        Path window = Kosa.HOME.resolve("run").resolve(box.id()).resolve("ws9p.window");
        byte[] probe = new byte[100_000];
        new java.util.Random(3).nextBytes(probe);
        Files.write(box.workspace().resolve("window-probe"), probe);
        Kosa.Result read = box.exec("sh", "-c", "dd if=window-probe of=/dev/null bs=1M");
        assertThat(read.exitCode()).as(read.toString()).isZero();
        byte[] before = Files.readAllBytes(window);
        assertThat(java.util.Arrays.copyOf(before, probe.length)).as("the read went through the window")
                .isEqualTo(probe);
        Kosa.Result r = box.exec("sh", "-c", "for d in /sys/block/*; do [ \"$(cat $d/serial 2>/dev/null)\" ="
                + " kosa8-ws9p-window ] && w=/dev/${d##*/}; done; echo window=$w;"
                + " head -c 65536 /dev/urandom > /tmp/junk; dd if=/tmp/junk of=$w bs=4096 count=16 conv=notrunc"
                + " oflag=direct 2>&1 || echo refused-direct; dd if=/tmp/junk of=$w bs=4096 count=16 conv=fsync 2>&1"
                + " || echo refused-buffered; blockdev --setrw $w 2>&1; dd if=/tmp/junk of=$w bs=4096 count=16"
                + " oflag=direct 2>&1 || echo refused-after-setrw");
        assertThat(r.stdout()).as(r.toString()).contains("window=/dev/vd", "refused-direct", "refused-buffered",
                "refused-after-setrw");
        assertThat(Files.readAllBytes(window)).as("the host's window file").isEqualTo(before);
        assertHostUntouched();
    }

    @Test
    void theWriteWindowCannotBeGrownOrUsedToReachTheHost(SharedSandbox.Booted box) throws Exception {
        Path writes = Kosa.HOME.resolve("run").resolve(box.id()).resolve("ws9p.writes");
        long size = Files.size(writes);
        // the guest owns the window's disk: it may scribble on it (only its own writes' data are there),
        // but not write past its end, and the host file stays the size QEMU was given
        Kosa.Result r = box.exec(Duration.ofMinutes(2), "sh", "-c", "w=$(grep -lx kosa8-ws9p-writes"
                + " /sys/block/*/serial); w=/dev/$(basename ${w%/serial}); echo writes=$w;"
                + " dd if=/dev/urandom of=$w bs=1M count=16 oflag=direct status=none && echo scribbled;"
                + " dd if=/dev/zero of=$w bs=1M seek=16 count=1 oflag=direct 2>&1 || echo refused-past-end;"
                + " dd if=/dev/zero of=$w bs=512 seek=$((32768 * 64)) count=1 2>&1 || echo refused-far");
        assertThat(r.stdout()).as(r.toString()).contains("writes=/dev/vd", "scribbled", "refused-past-end",
                "refused-far");
        assertThat(Files.size(writes)).isEqualTo(size);
        // and a large write after the scribbling still lands intact
        Kosa.Result after = box.exec(Duration.ofMinutes(2), "sh", "-c", "head -c 3000000 /dev/urandom > /tmp/a"
                + " && dd if=/tmp/a of=after-scribble bs=1M conv=fsync status=none && sha256sum < /tmp/a");
        assertThat(after.exitCode()).as(after.toString()).isZero();
        java.security.MessageDigest md = java.security.MessageDigest.getInstance("SHA-256");
        assertThat(after.stdout()).startsWith(java.util.HexFormat.of().formatHex(
                md.digest(Files.readAllBytes(box.workspace().resolve("after-scribble")))));
        assertHostUntouched();
    }

}
