package dev.kosa8.agent;

import dev.kosa8.protocol.Ws9p;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The workspace's devices in the guest, as the relay opens them at its
 * start: the port (found by its name, {@link Ws9p#PORT_NAME}), the read and
 * write windows' disks (found by their serial numbers among the block
 * devices; either may be missing, and then the port carries that data too),
 * and the CPU that takes the port's interrupts ({@link InterruptCpu}).
 *
 * @param port        the port, opened for reading and writing
 * @param readWindow  the read window's disk, opened O_DIRECT; -1 when the guest has none
 * @param writeWindow the write window's disk and its slots; null when the guest has none
 * @param cpu         the CPU taking the port's interrupts; -1 if unknown
 */
record WorkspaceDevices(int port, int readWindow, WriteSlots writeWindow, int cpu) {

    /** Finds and opens the workspace's port and window disks; waits up to 5 s for the port to appear. */
    static WorkspaceDevices open() throws IOException, InterruptedException {
        Path device = VirtioPort.find(Ws9p.PORT_NAME, 5_000);
        int cpu = InterruptCpu.ofPort(device).orElse(-1);
        Log.info(cpu < 0 ? "workspace relay: the port's interrupt CPU is unknown; its threads run anywhere"
                : "workspace relay: its threads run on CPU " + cpu + ", which takes the port's interrupts");
        return new WorkspaceDevices(Posix.open(device.toString(), Posix.O_RDWR), openReadWindow(), openWriteWindow(),
                cpu);
    }

    /** The read window's disk, found by its serial number among the block devices; -1 if there is none. */
    private static int openReadWindow() {
        try {
            Path disk = disk(Ws9p.READ_WINDOW_SERIAL);
            if (disk != null) {
                int fd = Posix.open("/dev/" + disk.getFileName(), Posix.O_RDONLY | Posix.O_DIRECT);
                Log.info("workspace relay: large reads come through the read window /dev/" + disk.getFileName());
                return fd;
            }
        } catch (IOException | RuntimeException e) {
            Log.info("workspace relay: no read window (" + e.getMessage() + "); all data comes through the port");
            return -1;
        }
        Log.info("workspace relay: the guest has no read window; all read data comes through the port");
        return -1;
    }

    /** The write window's disk and its slots (one per MiB of it), or null if there is none. */
    private static WriteSlots openWriteWindow() {
        try {
            Path disk = disk(Ws9p.WRITE_WINDOW_SERIAL);
            if (disk != null) {
                // /sys/block/X/size counts 512-byte sectors whatever the disk's block size
                long bytes = Long.parseLong(Files.readString(disk.resolve("size")).trim()) * 512;
                int slots = (int) Math.min(Ws9p.MAX_SLOTS, bytes / Ws9p.SLOT_SIZE);
                if (slots > 0) {
                    int fd = Posix.open("/dev/" + disk.getFileName(), Posix.O_RDWR | Posix.O_DIRECT);
                    Log.info("workspace relay: large writes go through the write window /dev/" + disk.getFileName()
                            + " (" + slots + " slots)");
                    return new WriteSlots(fd, slots);
                }
            }
        } catch (IOException | RuntimeException e) {
            Log.info("workspace relay: no write window (" + e.getMessage() + "); all data goes through the port");
            return null;
        }
        Log.info("workspace relay: the guest has no write window; all written data goes through the port");
        return null;
    }

    /** The block device whose serial number is {@code serial}, as its directory in /sys/block; null if none. */
    static Path disk(String serial) throws IOException {
        try (var disks = Files.list(Path.of("/sys/block"))) {
            for (Path disk : (Iterable<Path>) disks::iterator) {
                Path file = disk.resolve("serial");
                if (Files.isReadable(file) && Files.readString(file).trim().equals(serial)) {
                    return disk;
                }
            }
        }
        return null;
    }
}
