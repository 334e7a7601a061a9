package dev.kosa8.agent;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The plumbing of the agent's libc calls through Java's FFM API: downcall
 * handles that capture {@code errno}, and one call loop that retries EINTR
 * and turns any other failure into a {@link PosixException} naming the call.
 * What each call means stays with its user ({@link Posix} for the few several
 * classes share; the relay's, the terminal's, the mount's next to them); only
 * the mechanics are here, so errno and EINTR are handled in one place. (The
 * host has its own, {@code dev.kosa8.host.NativeCall}: the agent depends on
 * the protocol module alone.)
 */
final class Libc {
    static final int EINTR = 4;
    static final int EIO = 5;
    static final int EAGAIN = 11;
    static final int EPIPE = 32;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    private static final MemoryLayout STATE = Linker.Option.captureStateLayout();
    private static final long ERRNO_OFFSET = STATE.byteOffset(MemoryLayout.PathElement.groupElement("errno"));

    /** A downcall to make; it receives the errno capture segment first. */
    @FunctionalInterface
    interface Native {
        long invoke(MemorySegment state) throws Throwable;
    }

    private Libc() {
    }

    /** A downcall of libc's {@code name} that captures errno (the call state goes first). */
    static MethodHandle handle(String name, MemoryLayout result, MemoryLayout... args) {
        return LINKER.downcallHandle(find(name), FunctionDescriptor.of(result, args), ERRNO);
    }

    /** As {@link #handle}, for a variadic function whose variadic arguments start at {@code firstVariadic}. */
    static MethodHandle variadic(String name, int firstVariadic, MemoryLayout result, MemoryLayout... args) {
        return LINKER.downcallHandle(find(name), FunctionDescriptor.of(result, args), ERRNO,
                Linker.Option.firstVariadicArg(firstVariadic));
    }

    /** A downcall of libc's {@code name} that captures nothing: a function that reports no errno. */
    static MethodHandle plain(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(find(name), descriptor);
    }

    private static MemorySegment find(String name) {
        return LINKER.defaultLookup().find(name).orElseThrow(() -> new IllegalStateException("libc lacks " + name));
    }

    /** Room for the errno a call captures; one per thread that makes calls. */
    static MemorySegment callState(Arena arena) {
        return arena.allocate(STATE);
    }

    /**
     * Makes the call {@code fn} with the call state {@code state}, again while
     * it fails with EINTR, and returns its result (not negative). A failure
     * whose errno is among {@code expected} comes back as {@code -errno}, for
     * the caller to act on (an {@code expected} EINTR is not retried); any
     * other is thrown as a {@link PosixException} naming {@code what}.
     */
    static long call(MemorySegment state, String what, Native fn, int... expected) {
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
            int errno = state.get(ValueLayout.JAVA_INT, ERRNO_OFFSET);
            for (int e : expected) {
                if (e == errno) {
                    return -errno;
                }
            }
            if (errno != EINTR) {
                throw new PosixException(what, errno);
            }
        }
    }

    /** As {@link #call}, with a call state of its own: for calls made once, not in a loop. */
    static long call(String what, Native fn, int... expected) {
        try (Arena arena = Arena.ofConfined()) {
            return call(callState(arena), what, fn, expected);
        }
    }
}
