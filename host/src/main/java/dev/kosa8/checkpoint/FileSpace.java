package dev.kosa8.checkpoint;

import static dev.kosa8.checkpoint.Posix.O_DIRECTORY;
import static dev.kosa8.checkpoint.Posix.O_RDONLY;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The space a file takes on its file system: its allocated blocks ({@code statx}'s {@code stx_blocks}, in 512-byte
 * units), which is less than its size for a sparse file (a qcow2 disk whose guest discarded blocks) and counts a
 * clone's shared blocks in full, as {@code du} does. What {@code qemu-img info} calls a disk's actual size, without
 * starting a process.
 */
public final class FileSpace {
    private FileSpace() {
    }

    /** The bytes allocated to {@code p} (not followed if it is a symbolic link). */
    public static long allocated(Path p) throws IOException {
        Path abs = p.toAbsolutePath();
        int fd = Posix.open(ByteNames.fromHostPath(abs.getParent()), O_RDONLY | O_DIRECTORY);
        try {
            return Posix.statAt(fd, abs.getFileName().toString()).blocks() * 512;
        } finally {
            Posix.close(fd);
        }
    }
}
