package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Attacks on the workspace's confinement from inside the guest, as root,
 * through the guest kernel's 9p client: each must leave the host outside the
 * folder untouched. A canary folder beside the shared one, and a few host
 * paths, are checked after every attack. (Raw 9p messages the kernel would
 * never send — names with '/' or NUL, walks through host symlinks, a swap
 * during a walk at the protocol level — are sent straight to the server by
 * WorkspaceServerAttackTest; a guest root could send the same bytes.)
 */
// Symlinks out of the folder reach it here, as they did before they were held for review (HeldPathsIT
// covers holding them): the attacks below are on the server's confinement when such symlinks are in the
// folder, which a user who turns holding off (or a host program) can still put there.
@ExtendWith(SharedSandbox.class)
@SharedSandbox.CreateArgs({"--no-hold", "symlinks"})
class WorkspaceAttackIT {
    @RegisterExtension
    static final HostCanary canary = new HostCanary("outside-canary");

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
        Kosa.Result r = box.exec("sh", "-c", ReadOnlyDisk.writeAttempts("kosa8-ws9p-window"));
        assertThat(r.stdout()).as(r.toString()).contains(ReadOnlyDisk.ALL_REFUSED);
        assertThat(Files.readAllBytes(window)).as("the host's window file").isEqualTo(before);
        canary.assertUntouched();
    }

    @Test
    void dotDotWalksEndInTheGuestNotOnTheHost(SharedSandbox.Booted box) throws Exception {
        Kosa.Result r = box.exec("sh", "-c", "cd /workspace/../../..; pwd; ls /workspace/../ | grep -c canary-never;"
                + " echo owned > /workspace/../../" + canary.marker + "; cat " + box.workspace()
                + "/../outside-canary/canary"
                + " 2>&1; true");
        assertThat(r.stdout()).as(r.toString()).startsWith("/\n0\n").contains("No such file or directory");
        canary.assertUntouched();
    }

    @Test
    void symlinksToTheHostResolveInsideTheGuest(SharedSandbox.Booted box) throws Exception {
        Kosa.Result r = box.exec("sh", "-c", "ln -s /etc etc-link && ln -s ../outside-canary up && ln -s "
                + canary.outside + " abs-out && echo owned > etc-link/" + canary.marker + " && cat etc-link/hostname;"
                + " echo owned > up/x 2>/dev/null || echo refused-up; echo owned > abs-out/x 2>/dev/null"
                + " || echo refused-abs; rm etc-link/" + canary.marker);
        assertThat(r.stdout()).as(r.toString()).contains("refused-up", "refused-abs");
        // the guest's own /etc was written through the link, not the host's
        assertThat(Files.readSymbolicLink(box.workspace().resolve("etc-link"))).isEqualTo(Path.of("/etc"));
        canary.assertUntouched();
    }

    @Test
    void aSymlinkSwappedInDuringWalksNeverLeadsOut(SharedSandbox.Booted box) throws Exception {
        // a real directory and a symlink to the host's canary trade places as fast as the guest can,
        // while another loop writes and reads through the name
        Kosa.Result r = box.exec(Duration.ofMinutes(3), "sh", "-c", "mkdir -p race/d && cd race && "
                + "ln -s " + canary.outside + " evil && "
                + "(end=$(($(date +%s) + 6)); while [ $(date +%s) -lt $end ]; do"
                + " mv d real && mv evil d && mv d evil && mv real d; done) & "
                + "(end=$(($(date +%s) + 6)); n=0; while [ $(date +%s) -lt $end ]; do"
                + " echo inside > d/f 2>/dev/null; cat d/canary 2>/dev/null; n=$((n+1)); done; echo loops $n) ; wait");
        assertThat(r.stdout()).as(r.toString()).contains("loops").doesNotContain("untouched");
        canary.assertUntouched();
    }

    @Test
    void hardLinksToOutsideFilesAreRefused(SharedSandbox.Booted box) throws Exception {
        Kosa.Result r = box.exec("sh", "-c", "ln /etc/passwd pw 2>&1; ln " + canary.outside + "/canary c 2>&1; true");
        assertThat(r.stdout()).as(r.toString()).contains("Invalid cross-device link");
        assertThat(box.workspace().resolve("pw")).doesNotExist();
        assertThat(box.workspace().resolve("c")).doesNotExist();
        canary.assertUntouched();
    }

    @Test
    void deviceNodesCannotBeMadeButFifosCan(SharedSandbox.Booted box) throws Exception {
        Kosa.Result r = box.exec("sh", "-c", "mknod blk b 8 0 2>&1; mknod chr c 1 3 2>&1; mkfifo fifo && echo fifo-ok");
        assertThat(r.stdout()).as(r.toString()).contains("Operation not permitted").contains("fifo-ok");
        assertThat(box.workspace().resolve("blk")).doesNotExist();
        assertThat(box.workspace().resolve("chr")).doesNotExist();
        assertThat((Integer) Files.getAttribute(box.workspace().resolve("fifo"), "unix:mode") & 0170000)
                .isEqualTo(0010000);
    }

    @Test
    void aFifoLeftOnTheHostCannotHangTheServer(SharedSandbox.Booted box) throws Exception {
        Path fifo = box.workspace().resolve("host-fifo");
        new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start().waitFor();
        Kosa.Result r = box.exec("sh", "-c", "timeout 3 cat host-fifo; echo exit $?; ls -l host-fifo | cut -c1");
        // the guest's own open waits for a writer in the guest and times out; the server never opens it
        assertThat(r.stdout()).as(r.toString()).isEqualTo("exit 124\np\n");
        assertThat(box.exec("sh", "-c", "echo alive > after-fifo && cat after-fifo").stdout()).isEqualTo("alive\n");
    }
}
