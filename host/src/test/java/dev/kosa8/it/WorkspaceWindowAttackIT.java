package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Attacks from inside the guest, as root, on the write window, the
 * virtio-blk disk that carries large writes' data past the port: the guest
 * cannot grow it or reach the host through it. It is attached to every
 * sandbox, but only the relay writes through it (the kernel module needs no
 * write window), so the sandbox here relays ({@code --workspace-transport
 * relay}) and a large write after the scribbling goes through the window.
 * The read window, which the module uses too, is attacked in
 * {@link WorkspaceAttackIT}. A canary of its own, checked after the attack.
 */
@ExtendWith(SharedSandbox.class)
@SharedSandbox.CreateArgs({"--workspace-transport", "relay"})
class WorkspaceWindowAttackIT {
    @RegisterExtension
    static final HostCanary canary = new HostCanary("outside-canary-windows");

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
        canary.assertUntouched();
    }

}
