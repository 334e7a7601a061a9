package dev.kosa8.host;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.kosa8.protocol.LinuxAbi;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.util.function.IntFunction;

/**
 * The plumbing of the daemon's system calls through FFM, shared by the 9P
 * server's confinement layer ({@code workspace.LinuxFs}) and the workspace
 * snapshots ({@code checkpoint.Posix}): downcall handles that capture
 * {@code errno}, a call loop that retries {@code EINTR}, and byte-string
 * names. What a call means, and the error type it reports, stay with each
 * caller; only the mechanics are here, so EINTR and errno are handled in one
 * place.
 */
public final class NativeCall {
    /**
     * True on Linux on an architecture whose numbers kosa8 has ({@link LinuxAbi}: x86-64 and arm64), which every
     * caller takes its flags and system-call numbers from; elsewhere every call fails with ENOSYS.
     */
    public static final boolean AVAILABLE = "Linux".equals(System.getProperty("os.name"))
            && LinuxAbi.current().supported();
    public static final int EINTR = 4, EINVAL = 22, ENOSYS = 38;

    private static final Linker LINKER = AVAILABLE ? Linker.nativeLinker() : null;
    private static final MemoryLayout STATE = Linker.Option.captureStateLayout();
    private static final long ERRNO_OFFSET = STATE.byteOffset(MemoryLayout.PathElement.groupElement("errno"));

    /** A downcall to make; it receives the errno capture segment first. */
    @FunctionalInterface
    public interface Native {
        long invoke(MemorySegment state) throws Throwable;
    }

    private NativeCall() {
    }

    /**
     * A downcall of C library function {@code name} capturing errno;
     * {@code firstVariadic} is -1 for fixed-argument functions. Null off-platform.
     */
    @SuppressWarnings("restricted")
    public static MethodHandle handle(String name, int firstVariadic, MemoryLayout result, MemoryLayout... args) {
        if (!AVAILABLE) {
            return null;
        }
        FunctionDescriptor fd = FunctionDescriptor.of(result, args);
        Linker.Option errno = Linker.Option.captureCallState("errno");
        return firstVariadic < 0
                ? LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow(name), fd, errno)
                : LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow(name), fd, errno,
                        Linker.Option.firstVariadicArg(firstVariadic));
    }

    /**
     * Runs {@code fn} until it returns a non-negative result, retrying EINTR
     * when {@code retryEintr}; a failure becomes {@code failure.apply(errno)}
     * (ENOSYS off-platform).
     */
    public static <E extends Exception> long call(Arena arena, String what, Native fn, boolean retryEintr,
                                                  IntFunction<E> failure) throws E {
        if (!AVAILABLE) {
            throw failure.apply(ENOSYS);
        }
        MemorySegment state = arena.allocate(STATE);
        while (true) {
            long r;
            try {
                r = fn.invoke(state);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(what, t);
            }
            if (r >= 0) {
                return r;
            }
            int errno = state.get(JAVA_INT, ERRNO_OFFSET);
            if (errno != EINTR || !retryEintr) {
                throw failure.apply(errno);
            }
        }
    }

    /** A byte string (one char per byte) as a C string; {@code failure.apply(EINVAL)} for a NUL or a wider char. */
    public static <E extends Exception> MemorySegment cString(Arena arena, String s, IntFunction<E> failure) throws E {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == 0 || c > 0xff) {
                throw failure.apply(EINVAL);
            }
        }
        return arena.allocateFrom(s, StandardCharsets.ISO_8859_1);
    }

    /** A 32-bit field read as unsigned. */
    public static long u32(MemorySegment b, long offset) {
        return Integer.toUnsignedLong(b.get(JAVA_INT, offset));
    }
}
