package dev.kosa8.it;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.kosa8.host.NativeCall;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What a process has not read yet from its connection to a unix socket: the
 * bytes the kernel queues for it, looked at without taking them. The test
 * gets a copy of the process's descriptor ({@code pidfd_getfd}, which asks
 * the same permission as ptrace) and reads with {@code MSG_PEEK}, so the
 * process still reads every byte itself, in order, when it runs again.
 *
 * <p>What it is for: a daemon stopped with SIGSTOP reads nothing, so what a
 * guest writes on its console (a socket QEMU serves, which the daemon reads
 * into the console log) waits in that queue, where the test can see it.
 */
final class UnreadSocketBytes {
    private static final int MSG_PEEK = 0x2, MSG_DONTWAIT = 0x40, EAGAIN = 11, AF_UNIX = 1;
    private static final MethodHandle PIDFD_OPEN = NativeCall.handle("pidfd_open", -1, JAVA_INT, JAVA_INT, JAVA_INT);
    private static final MethodHandle PIDFD_GETFD = NativeCall.handle("pidfd_getfd", -1, JAVA_INT, JAVA_INT, JAVA_INT,
            JAVA_INT);
    private static final MethodHandle GETPEERNAME = NativeCall.handle("getpeername", -1, JAVA_INT, JAVA_INT, ADDRESS,
            ADDRESS);
    private static final MethodHandle RECV = NativeCall.handle("recv", -1, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG,
            JAVA_INT);
    private static final MethodHandle CLOSE = NativeCall.handle("close", -1, JAVA_INT, JAVA_INT);

    private UnreadSocketBytes() {
    }

    /**
     * The bytes (at most {@code max}) waiting unread in process {@code pid}'s
     * connection to the unix socket at one of {@code peers}, as text.
     *
     * @throws IOException when the process has no such connection, or this
     *                     process may not copy its descriptors (it must be root or the same user without Yama's
     *                     ptrace restriction, as the tests run here)
     */
    static String of(long pid, java.util.List<Path> peers, int max) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            int pidfd = (int) NativeCall.call(arena, "pidfd_open", s -> (int) PIDFD_OPEN.invokeExact(s, (int) pid, 0),
                    false, e -> new IOException("pidfd_open(" + pid + "): errno " + e));
            try {
                for (Path fd : sockets(pid)) {
                    int target = Integer.parseInt(fd.getFileName().toString());
                    int copy;
                    try {
                        copy = (int) NativeCall.call(arena, "pidfd_getfd",
                                s -> (int) PIDFD_GETFD.invokeExact(s, pidfd, target, 0), true,
                                e -> new IOException("pidfd_getfd(" + pid + ", " + target + "): errno " + e
                                        + " (the test must be allowed to ptrace the daemon)"));
                    } catch (IOException gone) {
                        if (Files.exists(fd)) {
                            throw gone;
                        }
                        continue; // closed meanwhile
                    }
                    try {
                        String name = peerName(arena, copy);
                        if (peers.stream().anyMatch(p -> p.toString().equals(name))) {
                            return peek(arena, copy, max);
                        }
                    } finally {
                        close(arena, copy);
                    }
                }
            } finally {
                close(arena, pidfd);
            }
        }
        throw new IOException("process " + pid + " has no connection to any of " + peers);
    }

    private static java.util.List<Path> sockets(long pid) throws IOException {
        try (var fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            return fds.filter(f -> {
                try {
                    return Files.readSymbolicLink(f).toString().startsWith("socket:");
                } catch (IOException closed) {
                    return false;
                }
            }).toList();
        }
    }

    /** The path of the unix socket {@code fd} is connected to, or "" for another kind of socket. */
    private static String peerName(Arena arena, int fd) throws IOException {
        MemorySegment addr = arena.allocate(110);
        MemorySegment len = arena.allocate(JAVA_INT);
        len.set(JAVA_INT, 0, 110);
        try {
            NativeCall.call(arena, "getpeername", s -> (int) GETPEERNAME.invokeExact(s, fd, addr, len), false,
                    e -> new IOException("getpeername: errno " + e));
        } catch (IOException notConnected) {
            return "";
        }
        int n = len.get(JAVA_INT, 0);
        if (n <= 2 || addr.get(java.lang.foreign.ValueLayout.JAVA_SHORT, 0) != AF_UNIX) {
            return "";
        }
        byte[] path = addr.asSlice(2, n - 2).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        int end = 0;
        while (end < path.length && path[end] != 0) {
            end++;
        }
        return new String(path, 0, end, StandardCharsets.UTF_8);
    }

    private static String peek(Arena arena, int fd, int max) throws IOException {
        MemorySegment buf = arena.allocate(max);
        long n;
        try {
            n = NativeCall.call(arena, "recv", s -> (long) RECV.invokeExact(s, fd, buf, (long) max,
                    MSG_PEEK | MSG_DONTWAIT), true, e -> new IOException("recv: errno " + e));
        } catch (IOException e) {
            if (e.getMessage().endsWith("errno " + EAGAIN)) {
                return "";
            }
            throw e;
        }
        return new String(buf.asSlice(0, n).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
    }

    private static void close(Arena arena, int fd) {
        try {
            NativeCall.call(arena, "close", s -> (int) CLOSE.invokeExact(s, fd), false, e -> new IOException());
        } catch (IOException ignored) {
            // nothing to do
        }
    }
}
