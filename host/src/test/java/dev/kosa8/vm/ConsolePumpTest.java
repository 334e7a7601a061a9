package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ConsolePump} against a stand-in for QEMU's console socket: 100 MiB
 * of console output, as fast as the host takes it, keeps the log within its
 * 4 MiB, and its latest lines are the guest's last.
 */
class ConsolePumpTest {
    @TempDir
    Path dir;

    @Test
    void aHundredMebibytesOfConsoleOutputKeepTheLogWithinItsLimit() throws Exception {
        Path run = Files.createDirectories(dir.resolve("run"));
        VmSpec spec = new VmSpec("abc123abc123", Accelerator.TCG, 2, 1024, dir.resolve("vmlinux"),
                dir.resolve("initramfs.cpio"), dir.resolve("root.qcow2"), "console=ttyS0", dir.resolve("console.log"),
                run.resolve("qmp.sock"), run.resolve("agent.sock"), null);
        try (ServerSocketChannel qemu = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            qemu.bind(UnixDomainSocketAddress.of(spec.consoleSocket()));
            ConsolePump pump = ConsolePump.start(spec, Duration.ofSeconds(5), null);
            long written = 0;
            try (SocketChannel guest = qemu.accept()) {
                StringBuilder chunk = new StringBuilder();
                for (int line = 0; written < 100L << 20; line++) {
                    chunk.append("console line ").append(line).append(' ').append("x".repeat(60)).append('\n');
                    if (chunk.length() > 60_000) {
                        written += write(guest, chunk);
                        chunk.setLength(0);
                    }
                }
                chunk.append("the guest's very last line\n");
                written += write(guest, chunk);
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!ConsoleLog.tail(spec.consoleLog(), 1).equals("the guest's very last line")
                    && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            pump.close();
            assertThat(written).isGreaterThan(100L << 20);
            long kept = Files.size(spec.consoleLog()) + Files.size(ConsoleLog.older(spec.consoleLog()));
            assertThat(kept).as("console.log and console.log.1 together").isLessThanOrEqualTo(VmSpec.DEFAULT_CONSOLE_LIMIT)
                    .isGreaterThan(VmSpec.DEFAULT_CONSOLE_LIMIT / 2);
            assertThat(ConsoleLog.tail(spec.consoleLog(), 2).lines().toList()).hasSize(2)
                    .last().isEqualTo("the guest's very last line");
            assertThat(Files.readString(spec.consoleLog())).containsPattern("\\d+ bytes older than that were dropped");
        }
    }

    private static long write(SocketChannel to, CharSequence text) throws Exception {
        ByteBuffer b = ByteBuffer.wrap(text.toString().getBytes(StandardCharsets.UTF_8));
        long n = b.remaining();
        while (b.hasRemaining()) {
            to.write(b);
        }
        return n;
    }
}
