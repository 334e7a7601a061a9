package dev.kosa8.checkpoint;

import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A small XFS with reflinks, mounted on a loop device for one test: the file
 * system a clone is made on (this machine's own disk is ext4, which has none).
 * Needs root (mount) and xfsprogs ({@code scripts/host-setup.sh} installs it
 * for the tests); without root the test is skipped, said so; without
 * {@code mkfs.xfs} as root it fails, naming the package.
 */
final class ReflinkVolume implements AutoCloseable {
    private final Path image;
    final Path mount;

    private ReflinkVolume(Path image, Path mount) {
        this.image = image;
        this.mount = mount;
    }

    /** Makes and mounts a 512 MiB sparse XFS image under {@code dir}. */
    static ReflinkVolume mount(Path dir) throws IOException, InterruptedException {
        assumeThat(Files.getAttribute(Path.of("/proc/self"), "unix:uid")).as("mounting a loop XFS needs root")
                .isEqualTo(0);
        Path mkfs = Path.of("/usr/sbin/mkfs.xfs");
        if (!Files.isExecutable(mkfs)) {
            mkfs = Path.of("/sbin/mkfs.xfs");
        }
        if (!Files.isExecutable(mkfs)) {
            throw new IllegalStateException("mkfs.xfs is missing: install xfsprogs (apt-get install xfsprogs; "
                    + "./run-tests does this itself)");
        }
        Path image = dir.resolve("xfs.img");
        Path mount = Files.createDirectories(dir.resolve("xfs"));
        try (var f = new java.io.RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(512L << 20);
        }
        run(mkfs.toString(), "-q", "-m", "reflink=1", image.toString());
        run("mount", "-o", "loop", image.toString(), mount.toString());
        return new ReflinkVolume(image, mount);
    }

    /** Blocks the file system has in use, after every dirty page is on it (XFS counts delayed writes late). */
    long usedBytes() throws IOException, InterruptedException {
        run("sync", "-f", mount.toString());
        var store = Files.getFileStore(mount);
        return store.getTotalSpace() - store.getUnallocatedSpace();
    }

    @Override
    public void close() throws IOException {
        try {
            run("umount", mount.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            Files.deleteIfExists(image);
        }
    }

    private static void run(String... argv) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(List.of(argv)).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", argv) + " failed: " + out.strip());
        }
    }
}
