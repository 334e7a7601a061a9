package dev.kosa8.checkpoint;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.HostCommand;
import dev.kosa8.host.KosaException;
import dev.kosa8.vm.QmpClient;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A checkpoint's root disk: the internal qcow2 snapshot named by the
 * checkpoint's id inside the sandbox's {@code root.qcow2}. Taken and deleted
 * through QMP while QEMU holds the disk; reverted, deleted and copied with
 * {@code qemu-img} while no QEMU writes it.
 */
final class DiskSnapshots {
    private DiskSnapshots() {
    }

    /** Takes the snapshot {@code id} of the running machine's root disk (metadata only; QEMU is stopped). */
    static void take(QmpClient qmp, String id) {
        qmp.execute("blockdev-snapshot-internal-sync", Map.of("device", "root", "name", id), Checkpointer.QMP);
    }

    /** The names of the root disk's snapshots, as the running QEMU sees them. */
    static List<String> tags(QmpClient qmp) {
        JsonNode blocks = qmp.execute("query-block", Map.of(), Checkpointer.QMP);
        List<String> all = new ArrayList<>();
        for (JsonNode b : blocks) {
            for (JsonNode s : b.path("inserted").path("image").path("snapshots")) {
                all.add(s.path("name").asText());
            }
        }
        return all;
    }

    /** Removes snapshot {@code id} if there is one; the savevm-era ones, which hold RAM too, go the same way. */
    static void delete(QmpClient qmp, String id) {
        if (tags(qmp).contains(id)) {
            qmp.execute("blockdev-snapshot-delete-internal-sync", Map.of("device", "root", "name", id),
                    Checkpointer.QMP);
        }
    }

    /** Puts a disk no QEMU holds back to snapshot {@code id}; {@code log} receives qemu-img's output. */
    static void revert(Path disk, String id, Path log) {
        HostCommand.of("qemu-img", "snapshot", "-a", id, disk.toString())
                .logTo(log)
                .timeout(Duration.ofMinutes(5))
                .run(KosaException.Kind.VM, "putting the root disk back to " + id);
    }

    /** Removes snapshot {@code id}, if there is one, from a disk no QEMU holds. */
    static void deleteOffline(Path disk, String id) {
        String listed = HostCommand.of("qemu-img", "snapshot", "-l", disk.toString())
                .run(KosaException.Kind.VM, "listing the disk's snapshots");
        if (listed.lines().anyMatch(l -> l.trim().split("\\s+").length > 1 && l.trim().split("\\s+")[1].equals(id))) {
            HostCommand.of("qemu-img", "snapshot", "-d", id, disk.toString())
                    .run(KosaException.Kind.VM, "deleting the disk snapshot of " + id);
        }
    }

    /**
     * A new disk {@code target} holding {@code disk} as snapshot {@code id}
     * has it, as an overlay on the same backing file. {@code -U}: the
     * parent's QEMU holds its image open, and a snapshot's clusters do not
     * change while it exists (the caller keeps it from being removed).
     */
    static void copyOut(Path disk, String id, Path target, Path log) throws IOException {
        String info = HostCommand.of("qemu-img", "info", "-U", "--output=json", disk.toString())
                .run(KosaException.Kind.VM, "reading the parent's disk");
        JsonNode j = new ObjectMapper().readTree(info);
        String backing = j.path("full-backing-filename").asText(j.path("backing-filename").asText(""));
        List<String> argv = new ArrayList<>(List.of("qemu-img", "convert", "-U", "-f", "qcow2", "-O", "qcow2",
                "-l", "snapshot.name=" + id));
        if (!backing.isEmpty()) {
            argv.addAll(List.of("-B", backing, "-F", "qcow2"));
        }
        argv.addAll(List.of(disk.toString(), target.toString()));
        HostCommand.of(argv).logTo(log).timeout(Duration.ofMinutes(30))
                .run(KosaException.Kind.VM, "copying the checkpoint's disk for the fork");
    }
}
