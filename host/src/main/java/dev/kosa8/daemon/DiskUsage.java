package dev.kosa8.daemon;

import dev.kosa8.checkpoint.FileSpace;
import dev.kosa8.checkpoint.Undo;
import dev.kosa8.host.KosaException;
import dev.kosa8.vm.ConsoleLog;
import dev.kosa8.vm.DiskChain;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * What one sandbox keeps on the host's disk, as {@code kosa8 df} and {@code
 * kosa8 inspect} show it and its {@link Budget} counts it.
 *
 * @param disk         the root disk's overlay as allocated on the host (its blocks: what {@code qemu-img info} calls
 *                     its actual size), the checkpoints' disk snapshots inside it
 * @param diskVirtual  the root disk's size as the guest sees it: the most the guest can write without a
 *                     checkpoint keeping the old blocks
 * @param checkpoints  what its checkpoints and its pause to disk hold alone ({@link Undo#bytesHeld}), their
 *                     copies of the workspace and of the held layer included
 * @param held         its held layer ({@link HeldLayers#dir}): what the guest wrote to held paths, kept here
 *                     instead of in the folder until accepted or rejected
 * @param logs         its console, network and QEMU logs
 * @param other        its record and CA; for a fork whose folder is a copy-on-write view, what its guest
 *                     changed there ({@code folder-view/upper}: kept in kosa8's data, not in a folder of the user's);
 *                     in file-RAM mode, the file its running machine keeps its RAM in ({@code memory/})
 * @param spool        the request bodies its network broker holds on disk while it judges them (its spool files
 *                     are unlinked as they are made, so only the broker can say: {@code Broker.spooledBytes})
 */
public record DiskUsage(long disk, long diskVirtual, long checkpoints, long held, long logs, long other, long spool) {
    /** With no request body spooled. */
    public DiskUsage(long disk, long diskVirtual, long checkpoints, long held, long logs, long other) {
        this(disk, diskVirtual, checkpoints, held, logs, other, 0);
    }

    public long total() {
        return disk + checkpoints + held + logs + other + spool;
    }

    /** What the sandbox keeps that its logs' limits do not bound: the part a checkpoint's room is added to. */
    long keptBeyondLogs() {
        return disk + checkpoints + held + other + spool;
    }

    /**
     * This measure with what {@code undo}'s checkpoints hold measured again:
     * after a checkpoint, which changes nothing else the budget counts but
     * for its disk snapshot's metadata inside the root disk.
     */
    DiskUsage withCheckpoints(Undo undo) {
        try {
            return new DiskUsage(disk, diskVirtual, undo.bytesHeld(), held, logs, other, spool);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot measure what the checkpoints keep on disk: "
                    + e.getMessage(), "check the permissions of the sandbox's checkpoints folder", e);
        }
    }

    /** Measures {@code id}'s files, with no request body spooled (a sandbox whose broker is not running). */
    static DiskUsage of(SandboxLayout layout, String id, Undo undo) {
        return of(layout, id, undo, 0);
    }

    /** Measures the files of sandbox {@code s}, and the request bodies its broker holds now. */
    static DiskUsage of(SandboxLayout layout, Sandbox s) {
        var broker = s.broker();
        return of(layout, s.id(), s.undo(), broker == null ? 0 : broker.spooledBytes());
    }

    /** Measures {@code id}'s files; {@code spool}: the bytes of request bodies its broker holds on disk. */
    static DiskUsage of(SandboxLayout layout, String id, Undo undo, long spool) {
        Path dir = layout.directory(id);
        try {
            long disk = 0;
            long virtual = 0;
            Path root = layout.rootDisk(id);
            if (Files.exists(root)) {
                // read here, not with qemu-img: a checkpoint's admission measures this before every checkpoint,
                // and a process start was most of what that cost (issue 37)
                disk = FileSpace.allocated(root);
                virtual = DiskChain.virtualSize(root);
            }
            Path console = layout.consoleLog(id);
            long logs = size(console) + size(ConsoleLog.older(console)) + size(layout.netLog(id))
                    + size(layout.netLog(id).resolveSibling("net.log.1")) + size(layout.qemuLog(id));
            long other = size(dir.resolve("sandbox.json")) + tree(layout.ca(id))
                    + dev.kosa8.host.LiveTreeBytes.ofReadable(layout.folderView(id).resolve("upper"))
                    + memoryFiles(layout, id);
            long held = tree(HeldLayers.dir(layout, id));
            return new DiskUsage(disk, virtual, undo.bytesHeld(), held, logs, other, spool);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot measure what sandbox " + id + " keeps on disk: "
                    + e.getMessage(), "check the permissions of " + dir, e);
        }
    }

    /**
     * The blocks of the files the sandbox's machines keep their RAM in (file-RAM mode: reserved whole while a
     * machine runs, so the guest's memory never waits for disk room).
     */
    private static long memoryFiles(SandboxLayout layout, String id) throws IOException {
        long bytes = 0;
        for (Path dir : layout.machineDirs(id)) {
            Path f = layout.memoryFile(id, dir);
            if (Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)) {
                try {
                    bytes += FileSpace.allocated(f);
                } catch (java.nio.file.NoSuchFileException gone) {
                    // the machine ended meanwhile
                }
            }
        }
        return bytes;
    }

    /** The size of the disk image at {@code disk} as a guest sees it. */
    static long virtualSize(Path disk) {
        try {
            return DiskChain.virtualSize(disk);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.HOST, "cannot read the size of " + disk + ": "
                    + e.getMessage(), "check the image with `kosa8 doctor`", e);
        }
    }

    /**
     * A log's size; 0 when it is not there, also when it went between the look and the read (a log rotates by
     * moving the file aside and then making the next, as often as the guest writes enough).
     */
    private static long size(Path p) throws IOException {
        try {
            var a = Files.readAttributes(p, java.nio.file.attribute.BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return a.isRegularFile() ? a.size() : 0;
        } catch (java.nio.file.NoSuchFileException gone) {
            return 0;
        }
    }

    /**
     * The bytes of the regular files beneath {@code dir} (none when it is not
     * there), counted while the sandbox runs and changes them.
     */
    static long tree(Path dir) throws IOException {
        return dev.kosa8.host.LiveTreeBytes.of(dir);
    }

    /** The largest files a log can grow to: what {@link DiskBudget} keeps room for. */
    static long logRoom(Budget b) {
        return b.consoleBytes() + 2 * dev.kosa8.egress.AuditLog.MAX_BYTES + (1L << 20);
    }
}
