package dev.kosa8.agent;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One relay thread's native memory for its calls, allocated once so that
 * relaying a message allocates none: a call state ({@link Libc#callState}),
 * a {@code struct pollfd} and an {@code iovec}, aligned as the layouts that
 * write them need.
 */
record RelayScratch(MemorySegment st, MemorySegment pollfd, MemorySegment iov) {
    static RelayScratch allocate(Arena arena) {
        return new RelayScratch(Libc.callState(arena), arena.allocate(8, 4), arena.allocate(16, 8));
    }
}
