package dev.kosa8.agent;

import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.Ws9p;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Mounts the workspace when the host asks ({@link Message.MountWorkspace}):
 * mounts the kernel's 9p client at {@code /workspace}, over the port itself
 * when the image's kernel module takes it ({@link KernelTransport}), else on
 * the pipes of a {@link WorkspaceRelay}, and binds that at the folder's host
 * path too. Runs on
 * its own thread: the mount waits for the host's 9p server to answer. Asked
 * again {@code afresh} (the host's server was replaced without its state,
 * see {@link WorkspaceRelay}), it takes the old mount away and mounts anew.
 *
 * <p>Mount options, each for a reason: {@code version=9p2000.L} (the only
 * dialect the server speaks); {@code access=client} (one attach; the guest
 * kernel checks permissions against the modes the server reports);
 * {@code cache=mmap} (no page cache for reads and writes, so the folder is
 * live both ways, yet programs that mmap files work), or, when the host asks
 * for the cache, {@code cache=loose} kept true by the module; nosuid and nodev.
 */
final class WorkspaceMount {
    static final Path MOUNT_POINT = Path.of("/workspace");
    private static final long MS_NOSUID = 2, MS_NODEV = 4, MS_BIND = 4096;
    private static final int MNT_DETACH = 2;
    private static final MethodHandle MOUNT = Libc.handle("mount", ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
            ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS);
    private static final MethodHandle UMOUNT2 = Libc.handle("umount2",
            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT);
    private static final MethodHandle OPEN = Libc.variadic("open", 2, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
    private static final MethodHandle SYNCFS = Libc.handle("syncfs", ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
    private static final MethodHandle CLOSE = Libc.handle("close", ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
    private static final int O_RDONLY_CLOEXEC = 0x80000; // O_RDONLY | O_CLOEXEC, the same on x86-64 and arm64
    /** The cached mount's root, open to sync it by; -1 while the mount does not cache. */
    private static volatile int cachedRoot = -1;
    /** Where exec runs by default once mounted; null before. */
    private static volatile Path defaultDirectory;
    private static boolean mounted;
    /** Where {@link #MOUNT_POINT} is bound too, the folder's host path; null for nowhere. */
    private static Path bound;
    /** The port handed to the kernel at the first mount, for the agent's lifetime; null if relayed. */
    private static KernelTransport kernel;
    /** Opened at the first mount, for the agent's lifetime: a virtio-serial port opens once. */
    private static WorkspaceRelay relay;

    private WorkspaceMount() {
    }

    static Path defaultDirectory() {
        return defaultDirectory;
    }

    /** Starts the mount; answers on the channel with Exited(0) or Failed. Never registers a channel. */
    static Channel start(Message.MountWorkspace m, Outbox outbox) {
        Thread t = new Thread(() -> {
            try {
                Path where = mount(m.guestPath(), m.msize(), m.afresh(), m.relay(), m.cache());
                Log.info("workspace mounted at " + where);
                outbox.send(new Message.Exited(m.channel(), 0, 0));
            } catch (IOException | RuntimeException e) {
                Log.info("workspace mount failed: " + e.getMessage());
                outbox.send(new Message.Failed(m.channel(), Message.ErrorCode.INTERNAL,
                        "cannot mount the workspace: " + e.getMessage()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "ws9p-mount");
        t.setDaemon(true);
        t.start();
        return null;
    }

    /**
     * {@code relay}: the host asks for the relay even where the kernel transport is (decided at the first mount);
     * {@code cache}: for a cached mount, which only the kernel transport makes.
     */
    private static synchronized Path mount(String guestPath, int msize, boolean afresh, boolean relayAsked,
                                           boolean cache) throws IOException, InterruptedException {
        if (mounted && !afresh) {
            return defaultDirectory;
        }
        if (relay == null && kernel == null && !relayAsked) {
            kernel = KernelTransport.claim(Ws9p.PORT_NAME).orElse(null);
        }
        if (mounted) {
            unmountStale();
        }
        Files.createDirectories(MOUNT_POINT);
        String common = ",version=9p2000.L,msize=" + msize + ",access=client,cache=mmap";
        if (kernel != null) {
            try {
                if (!cache || !mountCached(msize)) {
                    callMount(KernelTransport.SOURCE, MOUNT_POINT.toString(), "9p", MS_NOSUID | MS_NODEV,
                            KernelTransport.OPTIONS + common);
                }
            } catch (RuntimeException e) {
                Log.info("the workspace's kernel transport did not mount (" + e.getMessage()
                        + "); relaying instead");
                kernel.release();
                kernel = null;
            }
        }
        if (kernel == null) {
            if (relay == null) {
                relay = WorkspaceRelay.open(msize);
            }
            String options = relay.connect() + common;
            try {
                callMount(WorkspaceRelay.SOURCE, MOUNT_POINT.toString(), "9p", MS_NOSUID | MS_NODEV,
                        options);
            } catch (RuntimeException e) {
                relay.detach();
                throw e;
            }
            relay.mounted();
        }
        Path where = MOUNT_POINT;
        if (!guestPath.isEmpty() && bindable(guestPath)) {
            Path target = Path.of(guestPath);
            Files.createDirectories(target);
            callMount(MOUNT_POINT.toString(), target.toString(), null, MS_BIND, null);
            bound = target;
            where = target;
        }
        mounted = true;
        defaultDirectory = where;
        return where;
    }

    /**
     * Mounts with the guest's cache ({@code cache=loose}) and hands the mount to the module, which tells
     * the host and from then on drops what the host's notices name ({@link KernelTransport#cache}).
     * False, with the mount taken away again, where the module does not take it: an uncached mount
     * follows, never a cache that nothing keeps true.
     */
    private static boolean mountCached(int msize) {
        callMount(KernelTransport.SOURCE, MOUNT_POINT.toString(), "9p", MS_NOSUID | MS_NODEV,
                KernelTransport.OPTIONS + ",version=9p2000.L,msize=" + msize + ",access=client,cache=loose");
        try {
            kernel.cache(MOUNT_POINT);
            cachedRoot = open(MOUNT_POINT.toString());
            Log.info("the workspace is cached in the guest, kept true to the host by its notices");
            return true;
        } catch (IOException | RuntimeException e) {
            Log.info("the workspace is not cached: " + e.getMessage());
            callUmount(MOUNT_POINT.toString(), 0);
            return false;
        }
    }

    /**
     * Takes away a mount whose server is gone: its connection first, so that
     * every process waiting on it gets EIO, then the mounts themselves,
     * detached (a process whose working directory is in it keeps that
     * directory, and gets errors from it; new ones get the new mount).
     */
    private static void unmountStale() {
        int root = cachedRoot;
        cachedRoot = -1;
        if (root >= 0) {
            close(root);
        }
        if (kernel != null) {
            kernel.abort();
        } else {
            relay.detach();
        }
        if (bound != null) {
            callUmount(bound.toString(), MNT_DETACH);
            bound = null;
        }
        callUmount(MOUNT_POINT.toString(), MNT_DETACH);
        mounted = false;
        Log.info("the workspace's earlier mount was taken away; mounting it afresh");
    }

    /**
     * What the guest's programs wrote to a cached folder is on the host when this returns (a command's
     * exit, a file put: what the host is told next may be read there at once). Nothing to do when the
     * folder is not cached, or nothing is waiting to be written; a failure is logged, never thrown.
     */
    static void flushCached() {
        int root = cachedRoot;
        if (root < 0) {
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            Libc.call(Libc.callState(arena), "syncfs /workspace", st -> (int) SYNCFS.invokeExact(st, root));
        } catch (RuntimeException e) {
            Log.info("cannot write the cached folder back: " + e.getMessage());
        }
    }

    /**
     * Every change the host made to a cached folder before now is in the guest's cache when this
     * returns (the module's {@code sync}: the host sends what it saw, and the module applies it), so a
     * command started next sees them. Nothing to do when the folder is not cached; a failure (the
     * host took longer than a second) is logged, never thrown: the command still sees the change
     * once its notice comes.
     */
    static void syncCached() {
        if (cachedRoot < 0) {
            return;
        }
        try {
            kernel.sync();
        } catch (IOException e) {
            Log.info("the cached folder was not brought up to date before a command: " + e.getMessage());
        }
    }

    private static int open(String path) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocateFrom(path);
            return (int) Libc.call(Libc.callState(arena), "open " + path,
                    st -> (int) OPEN.invokeExact(st, p, O_RDONLY_CLOEXEC, 0));
        }
    }

    private static void close(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            Libc.call(Libc.callState(arena), "close", st -> (int) CLOSE.invokeExact(st, fd));
        } catch (RuntimeException e) {
            // closed either way
        }
    }

    /** The host path is also bound in the guest unless it would cover part of the guest's own system. */
    static boolean bindable(String path) {
        Path p = Path.of(path).normalize();
        if (p.getNameCount() == 0 || p.equals(MOUNT_POINT)) {
            return false;
        }
        List<String> system = List.of("bin", "boot", "dev", "etc", "lib", "lib64", "proc", "run", "sbin", "sys",
                "usr", "var", "workspace");
        return !system.contains(p.getName(0).toString());
    }

    /** mount(2); a null {@code fsType} or {@code data} is passed as NULL. */
    private static void callMount(String source, String target, String fsType, long flags, String data) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment from = arena.allocateFrom(source);
            MemorySegment to = arena.allocateFrom(target);
            MemorySegment type = fsType == null ? MemorySegment.NULL : arena.allocateFrom(fsType);
            MemorySegment options = data == null ? MemorySegment.NULL : arena.allocateFrom(data);
            Libc.call(Libc.callState(arena), "mount " + target,
                    st -> (int) MOUNT.invokeExact(st, from, to, type, flags, options));
        }
    }

    /** umount2(2). */
    private static void callUmount(String target, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment path = arena.allocateFrom(target);
            Libc.call(Libc.callState(arena), "umount " + target, st -> (int) UMOUNT2.invokeExact(st, path, flags));
        }
    }
}
