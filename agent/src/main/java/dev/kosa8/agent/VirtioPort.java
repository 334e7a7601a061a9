package dev.kosa8.agent;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * The virtio-serial port the host talks to the agent through, found by the
 * name QEMU gives it ({@code virtserialport,name=...}) under
 * {@code /sys/class/virtio-ports}; the guest has no udev to make the
 * {@code /dev/virtio-ports} links. A port can be opened once, so one file
 * descriptor serves both directions.
 */
final class VirtioPort {
    static final String NAME = "dev.kosa8.agent";
    /** Where the kernel lists the ports, one directory each, named as the port's device in /dev. */
    static final Path SYSFS = Path.of("/sys/class/virtio-ports");

    private VirtioPort() {
    }

    static Path find(String name, long timeoutMillis) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        while (true) {
            if (Files.isDirectory(SYSFS)) {
                try (Stream<Path> ports = Files.list(SYSFS)) {
                    for (Path p : ports.toList()) {
                        Path n = p.resolve("name");
                        if (Files.isReadable(n) && Files.readString(n).strip().equals(name)) {
                            return Path.of("/dev", p.getFileName().toString());
                        }
                    }
                }
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("no virtio-serial port named " + name + " under " + SYSFS);
            }
            Thread.sleep(20);
        }
    }

    static RandomAccessFile open(Path device) throws IOException {
        return new RandomAccessFile(device.toFile(), "rw");
    }
}
