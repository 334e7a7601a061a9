package dev.kosa8.agent;

import dev.kosa8.protocol.Ws9p;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The workspace's port handed to the guest kernel's own 9p transport, the
 * {@code kosa8_ws9p} module the image builds and the initramfs loads (its
 * source says how it works): the kernel's 9p client then speaks straight to
 * the port, with no process, pipe or work item in a request's path, where
 * through the {@link WorkspaceRelay} every request crosses this agent.
 * Measured under TCG (bench/history/workspace.md, run 8): the metadata rows
 * 2-3x faster than through the relay.
 *
 * <p>Handing over: at boot virtio_console drives the port's device like the
 * agent's own. {@link #claim} finds the device by the port's name, writes its
 * name to the module's {@code claim} parameter (the module never takes a
 * device it was not handed), unbinds it from virtio_console and binds it to
 * the module. An image without the module, or a hand-over that fails, leaves
 * the relay to do the job; a device half-handed is given back to
 * virtio_console first.
 */
final class KernelTransport {
    static final String MODULE = "kosa8_ws9p";
    /** The mount's source (any name: the transport has one device). */
    static final String SOURCE = "kosa8";
    static final String OPTIONS = "trans=kosa8";
    private static final Path PARAMETERS = Path.of("/sys/module", MODULE, "parameters");
    private static final Path DRIVERS = Path.of("/sys/bus/virtio/drivers");
    private static final Path CONSOLE = DRIVERS.resolve("virtio_console");
    private static final Path OURS = DRIVERS.resolve(MODULE);

    private final String device;

    private KernelTransport(String device) {
        this.device = device;
    }

    /**
     * Hands the device of the port named {@code portName} to the module.
     * Empty, with the reason logged, when the image has no module or the
     * hand-over failed: the caller relays instead.
     */
    static Optional<KernelTransport> claim(String portName) {
        if (!Files.isDirectory(OURS)) {
            Log.info("the workspace goes through the relay: this image has no " + MODULE + " module loaded");
            return Optional.empty();
        }
        String device;
        try {
            device = deviceOf(VirtioPort.find(portName, 10_000));
        } catch (IOException e) {
            Log.info("the workspace goes through the relay: " + e.getMessage());
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
        try {
            write(PARAMETERS.resolve("claim"), device);
            write(CONSOLE.resolve("unbind"), device);
        } catch (IOException e) {
            Log.info("the workspace goes through the relay: cannot take " + device + " from virtio_console: "
                    + e.getMessage());
            return Optional.empty();
        }
        try {
            write(OURS.resolve("bind"), device);
            if (!Files.exists(OURS.resolve(device))) {
                throw new IOException("the driver did not take it");
            }
        } catch (IOException e) {
            Log.info("the workspace goes through the relay: " + MODULE + " did not take " + device + ": "
                    + e.getMessage());
            giveBack(device);
            return Optional.empty();
        }
        Log.info("the workspace's port (" + device + ") is driven by " + MODULE);
        offerReadWindow();
        return Optional.of(new KernelTransport(device));
    }

    /**
     * Tells the module the read window's disk (major:minor), found by its
     * serial as the relay finds it, so large Rreads' data come by one block
     * read instead of 4 KiB port pieces. Without it the module reads
     * everything from the port.
     */
    private static void offerReadWindow() {
        try {
            Path d = WorkspaceDevices.disk(Ws9p.READ_WINDOW_SERIAL);
            if (d != null) {
                write(PARAMETERS.resolve("read_window"), Files.readString(d.resolve("dev")).strip());
                Log.info("the workspace's large reads come through the read window " + d.getFileName());
                return;
            }
            Log.info("no read window disk: the workspace's reads all come through the port");
        } catch (IOException e) {
            Log.info("the read window is not used: " + e.getMessage());
        }
    }

    /** The virtio device a port belongs to, e.g. {@code virtio3} for {@code /dev/vport3p1}. */
    private static String deviceOf(Path port) throws IOException {
        Path link = VirtioPort.SYSFS.resolve(port.getFileName()).resolve("device");
        return link.toRealPath().getFileName().toString();
    }

    /**
     * Hands the module the cached mount at {@code root}: it tells the host's server, which from then on
     * sends what changes on the host, and the module drops that from the guest's cache.
     */
    void cache(Path root) throws IOException {
        write(PARAMETERS.resolve("cache_root"), root.toString());
    }

    /** Waits until every change the host saw before now is in the cached mount (the module's {@code sync}). */
    void sync() throws IOException {
        write(PARAMETERS.resolve("sync"), "1");
    }

    /**
     * The host's server is gone (a daemon restart): every request of the
     * mount fails now, and every later one, so nothing waits for an answer
     * that will not come. A new mount takes the device over.
     */
    void abort() {
        try {
            write(PARAMETERS.resolve("abort"), "1");
        } catch (IOException e) {
            Log.info("cannot cut the old workspace mount off: " + e.getMessage());
        }
    }

    /** Gives the device back to virtio_console, so the relay can open its port (a mount that failed). */
    void release() {
        try {
            write(OURS.resolve("unbind"), device);
        } catch (IOException e) {
            Log.info("cannot take " + device + " from " + MODULE + ": " + e.getMessage());
        }
        giveBack(device);
    }

    private static void giveBack(String device) {
        try {
            write(PARAMETERS.resolve("claim"), "-");
            write(CONSOLE.resolve("bind"), device);
        } catch (IOException e) {
            Log.info("cannot give " + device + " back to virtio_console: " + e.getMessage());
        }
    }

    private static void write(Path attribute, String value) throws IOException {
        Files.writeString(attribute, value, StandardCharsets.US_ASCII);
    }
}
