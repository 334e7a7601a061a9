package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The daemon's end of QEMU's migration stream: every byte to the file, and never a stream cut short. */
@org.junit.jupiter.api.Timeout(120)
class MachineStateTest {
    @TempDir
    Path tmp;

    /** Sends {@code data} as QEMU would, in odd-sized writes; returns how many bytes the receiver took. */
    static long send(Path socket, byte[] data) throws Exception {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            Random r = new Random(7);
            int off = 0;
            while (off < data.length) {
                int n = Math.min(data.length - off, 1 + r.nextInt(300_000));
                ByteBuffer b = ByteBuffer.wrap(data, off, n);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                off += n;
            }
            return off;
        }
    }

    CompletableFuture<Long> receiving(Path socket, FileChannel out) throws Exception {
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        CompletableFuture<Long> done = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> MachineState.receive(server, socket, out, done));
        return done;
    }

    @Test
    void everyByteReachesTheFile() throws Exception {
        byte[] data = new byte[(13 << 20) + 12345];
        new Random(1).nextBytes(data);
        Path file = tmp.resolve("state");
        Path socket = tmp.resolve("s.sock");
        CompletableFuture<Long> done = receiving(socket, FileChannel.open(file, StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE));

        send(socket, data);

        assertThat(done.get(30, TimeUnit.SECONDS)).isEqualTo(data.length);
        assertThat(Files.readAllBytes(file)).isEqualTo(data);
        assertThat(socket).as("the socket is removed once connected").doesNotExist();
    }

    @Test
    void aFullDiskStillTakesTheWholeStreamAndThenReportsIt() throws Exception {
        Path full = Path.of("/dev/full");
        assumeThat(Files.isWritable(full)).as("/dev/full, whose writes fail with ENOSPC").isTrue();
        byte[] data = new byte[9 << 20];
        new Random(2).nextBytes(data);
        Path socket = tmp.resolve("f.sock");
        CompletableFuture<Long> done = receiving(socket, FileChannel.open(full, StandardOpenOption.WRITE));

        long sent = send(socket, data); // a receiver that stopped reading would fail or block this

        assertThat(sent).isEqualTo(data.length);
        assertThatThrownBy(() -> done.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasMessageContaining("No space left on device");
    }
}
