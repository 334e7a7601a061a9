package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A checkpoint that may not fit on the disk: the sandbox's checkpoint
 * directory is put on a small tmpfs that holds the first checkpoint and has
 * less room left than the guest's memory. The second checkpoint must fail
 * with an error that says the disk is full and what to do, leave no part of
 * itself, and leave the sandbox running and the first checkpoint whole (a
 * rewind to it works). (A disk that fills while the RAM stream is written,
 * past this check, is MachineStateTest's: the stream is drained, never cut.)
 *
 * <p>Needs root to mount the tmpfs (CI and this machine run as root); skipped otherwise.
 */
class CheckpointDiskFullIT {
    static final Duration T = Duration.ofMinutes(3);
    static Path folder;
    static String id;
    static Path checkpoints;
    static boolean mounted;

    @BeforeAll
    static void boot() throws Exception {
        assumeThat(new com.sun.security.auth.module.UnixSystem().getUid()).as("mounting a tmpfs needs root").isZero();
        folder = Kosa.HOME.resolveSibling("it-workspaces").resolve("CheckpointDiskFullIT");
        if (Files.exists(folder)) {
            Kosa.deleteTree(folder);
        }
        Files.createDirectories(folder);
        folder = folder.toRealPath();
        // 256 MiB and a closed network: the template several other classes' sandboxes are made from
        id = Kosa.ok(Duration.ofMinutes(15), "create", "--memory", "256M", "--workspace", folder.toString())
                .stdout().strip();
        checkpoints = Kosa.HOME.resolve("data/sandboxes").resolve(id).resolve("checkpoints");
    }

    @AfterAll
    static void remove() throws Exception {
        if (mounted) {
            new ProcessBuilder("umount", "-l", checkpoints.toString()).inheritIO().start().waitFor();
        }
        if (id != null) {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
        }
    }

    static Kosa.Result sh(String script) {
        return Kosa.run(T, "exec", id, "--", "sh", "-c", script);
    }

    static void run(String... argv) throws Exception {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(String.join(" ", argv) + ": " + out).isZero();
    }

    @Test
    void aCheckpointThatDoesNotFitFailsClearlyAndLosesNothing() throws Exception {
        Kosa.ok(T, "exec", id, "--", "sh", "-c", "echo first > /workspace/state; echo first > /root/state; sync");
        String firstId = Kosa.ok(T, "checkpoint", id, "--wait", "-m", "fits").stdout().strip();
        Path firstPages = checkpoints.resolve("ram").resolve(firstId + ".pages");
        long firstBytes = Files.size(checkpoints.resolve(firstId + ".ram")) + Files.size(firstPages);

        // the checkpoint directory moves onto a tmpfs with room for what it holds and 48 MiB more
        long have;
        try (var walk = Files.walk(checkpoints)) {
            have = walk.filter(Files::isRegularFile).mapToLong(f -> f.toFile().length()).sum();
        }
        Path real = checkpoints.resolveSibling("checkpoints.real");
        Files.move(checkpoints, real);
        Files.createDirectory(checkpoints);
        run("mount", "-t", "tmpfs", "-o", "size=" + ((have >> 20) + 48) + "m,mode=700", "tmpfs", checkpoints.toString());
        mounted = true;
        run("cp", "-a", real + "/.", checkpoints.toString());

        sh("echo later > /workspace/state; echo later > /root/state; sync");

        Kosa.Result full = Kosa.run(T, "checkpoint", id, "-m", "does not fit");
        assertThat(full.exitCode()).as(full.toString()).isNotZero();
        assertThat(full.stderr()).as("says what happened and what to do").contains("No space left on device")
                .contains("free space");

        // nothing of it is left, the first is whole, and the sandbox runs on
        List<String> left;
        try (var files = Files.list(checkpoints)) {
            left = files.map(f -> f.getFileName().toString()).sorted().toList();
        }
        // hot-pages.pool: the sandbox's link to its template's list of pages to send first, written when it was made;
        // held: the checkpoints' copies of the held layer (docs/workspace.md), one per checkpoint like workspace's
        assertThat(left).as("no part of the failed checkpoint")
                .containsExactlyInAnyOrder(firstId + ".json", firstId + ".ram", "head", "held", "hot-pages.pool", "ram",
                        "workspace");
        try (var packs = Files.list(checkpoints.resolve("ram"))) {
            // the first checkpoint's own pages, and the template's it shares (the sandbox was made from one)
            assertThat(packs.map(f -> f.getFileName().toString()).toList()).hasSize(2).contains(firstId + ".pages")
                    .anyMatch(n -> n.startsWith("template-") && n.endsWith(".pages"));
        }
        // the workspace's: the first checkpoint's, and the folder as the sandbox started (kosa8 diff's start.json)
        try (var manifests = Files.list(checkpoints.resolve("workspace").resolve("manifests"))) {
            assertThat(manifests.map(f -> f.getFileName().toString()).toList()).as("workspace")
                    .containsExactlyInAnyOrder(firstId + ".json", "start.json");
        }
        try (var manifests = Files.list(checkpoints.resolve("held").resolve("manifests"))) {
            assertThat(manifests.map(f -> f.getFileName().toString()).toList()).as("held")
                    .containsExactly(firstId + ".json");
        }
        assertThat(Files.size(checkpoints.resolve(firstId + ".ram")) + Files.size(firstPages)).isEqualTo(firstBytes);
        assertThat(Kosa.ok(T, "checkpoints", id).stdout().lines().skip(1).toList()).hasSize(1);
        assertThat(sh("cat /root/state").stdout().strip()).isEqualTo("later");

        Kosa.ok(T, "rewind", id, firstId);
        assertThat(sh("cat /root/state").stdout().strip()).isEqualTo("first");
        assertThat(Files.readString(folder.resolve("state")).strip()).isEqualTo("first");
    }
}
