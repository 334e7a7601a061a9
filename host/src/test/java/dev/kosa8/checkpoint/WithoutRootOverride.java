package dev.kosa8.checkpoint;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * Runs code on the calling thread without root's CAP_DAC_OVERRIDE and
 * CAP_DAC_READ_SEARCH, so that permission bits bind as they do for the
 * daemon's ordinary user: a root-owned file of mode 000 cannot be read, a 0555
 * directory cannot be written. Capabilities are per thread (capset(2) changes
 * only the caller's), and both stay in the permitted set, so they are put back
 * afterwards. When not root, the code simply runs: the bits bind already.
 */
final class WithoutRootOverride {
    private static final long SYS_CAPGET = 125, SYS_CAPSET = 126;
    private static final int VERSION_3 = 0x20080522;
    private static final int DROPPED = 1 << 1 | 1 << 2; // CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH

    interface Body {
        void run() throws Exception;
    }

    private WithoutRootOverride() {
    }

    static boolean isRoot() {
        try {
            return (Integer) java.nio.file.Files.getAttribute(java.nio.file.Path.of("/proc/self"), "unix:uid") == 0;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    @SuppressWarnings("restricted")
    static void run(Body body) throws Exception {
        if (!isRoot()) {
            body.run();
            return;
        }
        Linker linker = Linker.nativeLinker();
        MethodHandle syscall = linker.downcallHandle(linker.defaultLookup().findOrThrow("syscall"),
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS), Linker.Option.firstVariadicArg(1));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment header = arena.allocate(8, 4);
            header.set(JAVA_INT, 0, VERSION_3);
            header.set(JAVA_INT, 4, 0);
            MemorySegment saved = arena.allocate(24, 4);
            check((long) syscall.invokeExact(SYS_CAPGET, header, saved), "capget");
            MemorySegment lowered = arena.allocate(24, 4).copyFrom(saved);
            lowered.set(JAVA_INT, 0, saved.get(JAVA_INT, 0) & ~DROPPED);
            header.set(JAVA_INT, 0, VERSION_3);
            check((long) syscall.invokeExact(SYS_CAPSET, header, lowered), "capset");
            try {
                body.run();
            } finally {
                header.set(JAVA_INT, 0, VERSION_3);
                check((long) syscall.invokeExact(SYS_CAPSET, header, saved), "capset");
            }
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    private static void check(long r, String call) {
        if (r != 0) {
            throw new IllegalStateException(call + " failed");
        }
    }
}
