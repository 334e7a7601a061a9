package dev.kosa8.agent;

import java.io.IOException;
import java.lang.foreign.Arena;

/**
 * Carries the workspace's 9p traffic between the guest kernel and the host,
 * where the image has no {@link KernelTransport}. The kernel's 9p client
 * cannot write to a virtio-serial port itself ({@code trans=fd} on the port fails: "kernel write not supported"), so it mounts
 * through two pipes ({@code trans=fd}, a {@link RelayConnection}): it writes
 * its requests into one and reads the host's replies from the other, and
 * this relay moves them between those pipes and the workspace's port
 * ({@link RelayPort}), to the host's 9p server behind it.
 *
 * <p>Each direction is one platform thread with one buffer of native memory
 * as large as a whole 9p message, so a message crosses in one read and one
 * write, and no byte is copied in Java: pipes and port are read and written
 * with read(2)/write(2) straight into that memory ({@link RelayIo}). Both
 * run on the CPU that takes the port's interrupts ({@link InterruptCpu}).
 * Their parts, one job each:
 * <ul>
 *   <li>{@link WorkspaceDevices}: the port and the window disks, found and opened once;</li>
 *   <li>{@link UpPump}: a mount's requests, kernel to host, with large Twrites' data through the write window
 *       ({@link WriteSlots}) and Tclunks answered in the guest;</li>
 *   <li>{@link DownPump}: the host's messages, host to kernel, with Rreadws turned into Rreads
 *       ({@link ReadWindowReader});</li>
 *   <li>this class: the mounts' lifecycle, a connection made for each and ended when the host's server is
 *       replaced ({@link CurrentMount}).</li>
 * </ul>
 *
 * <p>The port is opened once for the agent's life (a virtio-serial port
 * opens only once) and read by one thread for that life; a mount's
 * connection comes and goes. When the host's server is replaced without the
 * guest's state (the daemon restarted), the old mount's fids mean nothing to
 * the new one, so the host has the workspace mounted afresh: {@link #detach}
 * ends the old mount's connection, which fails every request the kernel
 * still waits on instead of leaving the process waiting forever, and then
 * the host's messages are dropped until the answer to the new mount's
 * Tversion.
 */
final class WorkspaceRelay {
    /** The mount's source, as /proc/mounts shows it ({@code trans=fd} has no address). */
    static final String SOURCE = "kosa8-workspace";

    private final RelayPort port;
    private final CurrentMount mount = new CurrentMount();
    /** The write window's disk and its slots; null when the guest has none. */
    private final WriteSlots writes;
    /** Whether the guest has a read window to ask the host for. */
    private final boolean readWindow;
    /** Put in place of a connection's end that is done with, so its number stays valid until its user closes it. */
    private final int devNull;
    private final int bufferSize;
    /** The CPU taking the port's interrupts, where both directions' threads run; -1 if unknown. */
    private final int cpu;
    /** The current mount's up pump's thread; null between mounts. */
    private Thread up;

    private WorkspaceRelay(WorkspaceDevices devices, int bufferSize) {
        this.port = new RelayPort(devices.port());
        this.writes = devices.writeWindow();
        this.readWindow = devices.readWindow() >= 0;
        this.bufferSize = bufferSize;
        this.cpu = devices.cpu();
        this.devNull = Posix.open("/dev/null", Posix.O_RDWR);
    }

    /** Opens the workspace's port (and its windows, if the guest has them) and reads it for the agent's lifetime. */
    static WorkspaceRelay open(int msize) throws IOException, InterruptedException {
        WorkspaceDevices devices = WorkspaceDevices.open();
        WorkspaceRelay relay = new WorkspaceRelay(devices, msize);
        Thread down = new Thread(new DownPump(relay.port, relay.mount, devices.writeWindow(), devices.readWindow(),
                msize, devices.cpu()), "ws9p-down");
        down.setDaemon(true);
        down.start();
        return relay;
    }

    /**
     * Makes the connection for the mount about to be made and starts relaying
     * its requests; returns the mount options that hand the kernel its ends
     * ({@code trans=fd,rfdno=..,wfdno=..}). Call {@link #mounted} once the
     * mount is made, {@link #detach} if it failed.
     */
    synchronized String connect() {
        RelayConnection c = RelayConnection.open(bufferSize, ReadWindowReader.RING);
        if (writes != null) {
            writes.reset();
        }
        Thread t = new Thread(new UpPump(c, port, writes, readWindow, bufferSize, cpu), "ws9p-up");
        t.setDaemon(true);
        mount.attach(c);
        up = t;
        t.start();
        return c.mountOptions();
    }

    /** The kernel holds its ends of the connection now: the relay lets go of its copy of the replies' read end. */
    synchronized void mounted() {
        RelayConnection c = mount.current();
        if (c != null) {
            // with it gone, replies to a mount that has gone away fail (EPIPE) instead of filling the pipe
            c.closeKernelReads();
        }
    }

    /**
     * Ends the current mount's connection: the kernel fails what that mount
     * still waits on. What the host sends next is dropped up to the next
     * mount's Rversion.
     */
    synchronized void detach() {
        RelayConnection c = mount.detach();
        Thread t = up;
        up = null;
        if (c == null) {
            return;
        }
        port.close(c); // no request of the old mount follows the new one's Tversion to the port
        c.closeKernelReads();
        // the last write end of the replies goes: the kernel's reader sees the pipe hung up and fails what it
        // waits on; the number stays valid (it is /dev/null now) until the port's reader, its user, closes it
        RelayIo.dupOnto(devNull, c.replies);
        mount.retire(c); // only now may the port's reader close the number
        try (Arena arena = Arena.ofConfined()) {
            // wakes the up pump if it waits for a request: it finds the connection closed and ends
            RelayIo.writeSome(c.kernelWrites, arena.allocate(1), 1, Libc.callState(arena));
        } catch (RuntimeException e) {
            // the pipe is full (then the thread is not waiting) or the mount is gone
        }
        try {
            t.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Posix.close(c.kernelWrites);
    }
}
