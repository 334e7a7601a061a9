package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * An arm64 guest on this x86-64 host (docs/arm64.md): {@code kosa8 run --arch arm64} builds kosa8's arm64 image on
 * first use (its root filesystem in an arm64 builder VM under emulation) and boots it on QEMU's {@code virt}
 * machine under TCG; then each of the five properties once, against that guest: its own kernel, the one folder
 * both ways and closed to the host's other files, the closed network, and a checkpoint and rewind that put the
 * process, the disk and the folder back to one instant.
 *
 * <p>Tagged {@code arm64}: the image build alone takes 10-15 minutes here, so the class runs with
 * {@code ./run-tests arm64}, not in the default suite.
 */
@Tag("arm64")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class Arm64GuestIT {
    static final Duration T = Duration.ofMinutes(5);
    static String id;
    static Path folder;

    static Kosa.Result sh(String script) {
        return Kosa.run(T, "exec", id, "--", "sh", "-c", script);
    }

    @BeforeAll
    static void create() throws Exception {
        folder = Kosa.HOME.resolveSibling("it-workspaces").resolve("Arm64GuestIT");
        if (Files.exists(folder)) {
            Kosa.deleteTree(folder);
        }
        Files.createDirectories(folder);
        folder = folder.toRealPath();
    }

    @AfterAll
    static void remove() {
        if (id != null) {
            Kosa.run(T, "rm", "-f", id);
        }
    }

    @Test
    @Order(1)
    void runBuildsTheArm64ImageAndItsGuestIsAarch64() {
        Kosa.Result r = Kosa.run(Duration.ofMinutes(45), "run", "--arch", "arm64", "--memory", "512M",
                "--workspace", "none", "--", "uname", "-m");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.stdout().strip()).isEqualTo("aarch64");
    }

    @Test
    @Order(2)
    void theGuestHasItsOwnArm64KernelAndJava() {
        id = Kosa.ok(Duration.ofMinutes(10), "create", "--arch", "arm64", "--memory", "512M", "--workspace",
                folder.toString()).stdout().strip();
        assertThat(id).matches("[0-9a-f]{12}");
        Kosa.Result k = sh("uname -m; uname -r; /opt/kosa8/jre/bin/java -version 2>&1 | head -1");
        assertThat(k.exitCode()).as(k.toString()).isZero();
        List<String> lines = k.stdout().strip().lines().toList();
        assertThat(lines.get(0)).isEqualTo("aarch64");
        assertThat(lines.get(1)).as("Debian 13's arm64 kernel").endsWith("-arm64")
                .isNotEqualTo(System.getProperty("os.version"));
        assertThat(lines.get(2)).contains("25");
        assertThat(Kosa.ok(T, "inspect", id).stdout()).contains("arm64");
    }

    @Test
    @Order(3)
    void theFolderIsSharedBothWaysAndNothingElseOfTheHost() throws Exception {
        Files.writeString(folder.resolve("from-host.txt"), "written on the host\n");
        Kosa.Result r = sh("cat /workspace/from-host.txt && echo 'written in the guest' > /workspace/from-guest.txt"
                + " && sync");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        assertThat(r.stdout()).contains("written on the host");
        assertThat(folder.resolve("from-guest.txt")).hasContent("written in the guest");
        // the host's files beside the folder are out of reach: a path up and out ends at the guest's own root
        Files.writeString(folder.resolveSibling("Arm64GuestIT-outside.txt"), "host secret\n");
        Kosa.Result out = sh("cat /workspace/../Arm64GuestIT-outside.txt "
                + folder.getParent().resolve("Arm64GuestIT-outside.txt") + " 2>&1; true");
        assertThat(out.stdout()).doesNotContain("host secret");
    }

    @Test
    @Order(4)
    void theNetworkIsClosed() {
        Kosa.Result r = sh("curl -sS --max-time 20 -o /dev/null -w '%{http_code}' https://deb.debian.org/ 2>&1;"
                + " echo \" exit=$?\"");
        assertThat(r.stdout()).as("no host is allowed by default").doesNotContain("exit=0");
    }

    @Test
    @Order(5)
    void aRewindPutsProcessDiskAndFolderBackToOneInstant() throws Exception {
        Kosa.Result start = sh(CheckpointIT.START_COUNTING);
        assertThat(start.exitCode()).as(start.toString()).isZero();
        waitForCount(3);
        String checkpoint = Kosa.ok(T, "checkpoint", id, "--wait", "-m", "counter running").stdout().strip();
        int atCheckpoint = CheckpointIT.numbers(Files.readString(folder.resolve("counter.log"))).size();
        waitForCount(atCheckpoint + 6);
        sh("echo later > /root/later.txt; echo later >> /workspace/counter.log; sync");

        assertThat(Kosa.ok(T, "rewind", id).stdout().strip()).isEqualTo(checkpoint);
        assertThat(Files.readString(folder.resolve("counter.log"))).doesNotContain("later");
        // the guest runs on while its RAM is still coming in (a lazy load), slower under emulation: wait for the
        // counter to go on, a minute at most
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (CheckpointIT.numbers(Files.readString(folder.resolve("counter.log"))).size() <= atCheckpoint + 2
                && System.nanoTime() < deadline) {
            Thread.sleep(500);
        }
        List<Integer> workspace = CheckpointIT.numbers(Files.readString(folder.resolve("counter.log")));
        List<Integer> disk = CheckpointIT.numbers(sh("cat /root/counter.log").stdout());
        CheckpointIT.assertConsecutiveFromOne(workspace, "the folder's counter");
        CheckpointIT.assertConsecutiveFromOne(disk, "the root disk's counter");
        assertThat(workspace.size()).as("the process went on from the checkpoint's instant")
                .isGreaterThan(atCheckpoint);
        assertThat(sh("test -e /root/later.txt; echo $?").stdout().strip()).isEqualTo("1");
    }

    @Test
    @Order(6)
    void whatAnotherArchitecturesGuestCannotHaveIsRefusedSayingWhy() {
        Kosa.Result image = Kosa.run(T, "create", "--arch", "arm64", "--image", "tools:1", "--workspace", "none");
        assertThat(image.exitCode()).as(image.toString()).isEqualTo(2);
        assertThat(image.stderr()).contains("images built or imported by name are this host's architecture's")
                .contains("drop --image, or drop --arch");
        Kosa.Result kvm = Kosa.run(T, "create", "--arch", "arm64", "--accel", "kvm", "--workspace", "none");
        assertThat(kvm.exitCode()).as(kvm.toString()).isEqualTo(2);
        assertThat(kvm.stderr()).contains("only under TCG");
        Kosa.Result lock = Kosa.run(T, "image", "build", "--arch", "arm64", "--from-lock", "/nonexistent.lock");
        assertThat(lock.exitCode()).as(lock.toString()).isEqualTo(2);
        assertThat(lock.stderr()).contains("--from-lock rebuilds the image of this host's architecture");
        Kosa.Result bad = Kosa.run(T, "run", "--arch", "riscv64", "--", "true");
        assertThat(bad.exitCode()).as(bad.toString()).isEqualTo(2);
        assertThat(bad.stderr()).contains("unknown architecture 'riscv64'").contains("amd64, arm64");
    }

    static void waitForCount(int atLeast) throws InterruptedException {
        CheckpointIT.waitForCount(() -> sh("cat /root/counter.log 2>/dev/null").stdout(), atLeast);
    }
}
