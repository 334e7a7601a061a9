package dev.kosa8.agent;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * What a restored guest's kernel must be told before its processes run again
 * ({@link Checkpointing#thaw}): the host's time, and fresh random bytes from
 * the host to reseed its random generator with, so a guest restored from the
 * same RAM again does not repeat the random numbers of the last restore.
 */
final class ClockAndEntropy {
    private static final int CLOCK_REALTIME = 0;
    /** {@code _IOW('R', 0x03, int[2])} and {@code _IO('R', 0x07)} from linux/random.h. */
    private static final long RNDADDENTROPY = 0x40085203L, RNDRESEEDCRNG = 0x5207L;
    private static final MethodHandle CLOCK_SETTIME = Libc.handle("clock_settime",
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS);
    private static final MethodHandle IOCTL_PTR = Libc.variadic("ioctl", 2,
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS);
    private static final MethodHandle IOCTL_NOARG = Libc.variadic("ioctl", 2,
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG);

    private ClockAndEntropy() {
    }

    /** Sets the system clock (CLOCK_REALTIME). */
    static void setClock(long epochMillis) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ts = arena.allocate(16, 8);
            ts.set(ValueLayout.JAVA_LONG, 0, Math.floorDiv(epochMillis, 1000));
            ts.set(ValueLayout.JAVA_LONG, 8, Math.floorMod(epochMillis, 1000) * 1_000_000L);
            Libc.call(Libc.callState(arena), "clock_settime",
                    st -> (int) CLOCK_SETTIME.invokeExact(st, CLOCK_REALTIME, ts));
        }
    }

    /**
     * Mixes {@code seed} into the kernel's random pool, credited as entropy,
     * and has the kernel reseed its generator from the pool at once, so the
     * next random bytes depend on the seed (RNDADDENTROPY, RNDRESEEDCRNG).
     */
    static void reseed(byte[] seed) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment st = Libc.callState(arena);
            int fd = Posix.open("/dev/urandom", Posix.O_RDWR);
            try {
                MemorySegment info = arena.allocate(8L + seed.length, 4);
                info.set(ValueLayout.JAVA_INT, 0, seed.length * 8);
                info.set(ValueLayout.JAVA_INT, 4, seed.length);
                MemorySegment.copy(seed, 0, info, ValueLayout.JAVA_BYTE, 8, seed.length);
                Libc.call(st, "ioctl(RNDADDENTROPY)", s -> (int) IOCTL_PTR.invokeExact(s, fd, RNDADDENTROPY, info));
                Libc.call(st, "ioctl(RNDRESEEDCRNG)", s -> (int) IOCTL_NOARG.invokeExact(s, fd, RNDRESEEDCRNG));
            } finally {
                Posix.close(fd);
            }
        }
    }
}
