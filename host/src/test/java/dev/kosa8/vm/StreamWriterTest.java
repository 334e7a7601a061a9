package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.kosa8.host.HostTools;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The writer of QEMU's migration stream, with a client sending as QEMU
 * does: every byte reaches the file, a full disk never cuts the stream, and
 * the writer outlives the process that started it.
 */
@Timeout(120)
class StreamWriterTest {
    @TempDir
    Path tmp;

    @BeforeEach
    void tools() {
        assumeThat(HostTools.which("socat")).as("socat, a host package kosa8 installs").isNotNull();
    }

    /** Sends {@code data} in odd-sized writes; fails (broken pipe) if the writer stops reading. */
    static long send(Path socket, byte[] data) throws IOException {
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

    @Test
    void aSocketCountsAsListeningOnlyOnceItAccepts() throws Exception {
        Path socket = tmp.resolve("l.sock");
        assertThat(StreamWriter.listening(socket)).as("nothing there").isFalse();
        Files.writeString(socket, "not a socket");
        assertThat(StreamWriter.listening(socket)).as("a file of that name").isFalse();
        Files.delete(socket);
        try (var server = java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            assertThat(StreamWriter.listening(socket)).isTrue();
        }
    }

    @Test
    void everyByteReachesTheFile() throws Exception {
        byte[] data = new byte[(13 << 20) + 12345];
        new Random(1).nextBytes(data);
        Path file = tmp.resolve("state");
        Path socket = tmp.resolve("s.sock");
        StreamWriter w = StreamWriter.start(socket, file);

        send(socket, data);

        assertThat(w.finish(Duration.ofSeconds(30), true)).isEqualTo(data.length);
        assertThat(Files.readAllBytes(file)).isEqualTo(data);
        assertThat(socket).doesNotExist();
    }

    @Test
    void aStreamTakenApartLaterIsWholeWithoutBeingForced() throws Exception {
        byte[] data = new byte[(3 << 20) + 7];
        new Random(3).nextBytes(data);
        Path file = tmp.resolve("state2");
        Path socket = tmp.resolve("s2.sock");
        StreamWriter w = StreamWriter.start(socket, file);

        send(socket, data);

        assertThat(w.finish(Duration.ofSeconds(30), false)).isEqualTo(data.length);
        assertThat(Files.readAllBytes(file)).isEqualTo(data);
    }

    /**
     * A writer whose QEMU never connected (its daemon died between starting it and the migration) is found by
     * its file and ended with its socat; another writer, and the process that started neither, are left alone.
     */
    @Test
    void aWriterLeftListeningIsFoundByItsFileAndEndedAndNoOtherIs() throws Exception {
        StreamWriter abandoned = StreamWriter.start(tmp.resolve("a.sock"), tmp.resolve("a.vmstate.tmp"));
        StreamWriter other = StreamWriter.start(tmp.resolve("b.sock"), tmp.resolve("b.vmstate.tmp"));
        ProcessHandle a = ProcessHandle.of(abandoned.pid()).orElseThrow();
        List<ProcessHandle> itsSocat = a.descendants().toList();
        assertThat(itsSocat).as("the writer's socat").isNotEmpty();

        assertThat(StreamWriter.endWritersOf(tmp.resolve("./a.vmstate.tmp"))).isEqualTo(1);
        a.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS);
        for (ProcessHandle child : itsSocat) {
            child.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS);
        }
        assertThat(ProcessHandle.of(other.pid()).map(ProcessHandle::isAlive)).contains(true);
        assertThat(StreamWriter.endWritersOf(tmp.resolve("a.vmstate.tmp"))).as("none left").isZero();

        // the other one still writes its stream whole
        byte[] data = new byte[4096];
        new Random(5).nextBytes(data);
        send(tmp.resolve("b.sock"), data);
        assertThat(other.finish(Duration.ofSeconds(30), false)).isEqualTo(data.length);
    }

    @Test
    void anExistingFileIsNeverOverwritten() throws Exception {
        Path file = Files.writeString(tmp.resolve("state"), "a committed state");
        assertThatThrownBy(() -> StreamWriter.start(tmp.resolve("e.sock"), file))
                .isInstanceOf(java.nio.file.FileAlreadyExistsException.class);
        assertThat(file).hasContent("a committed state");
    }

    @Test
    void aFullDiskStillTakesTheWholeStreamAndThenSaysSo() throws Exception {
        // every write to /dev/full fails with ENOSPC, as on a full disk (a small tmpfs would need root)
        Path full = Path.of("/dev/full");
        assumeThat(Files.isWritable(full)).isTrue();
        Path socket = tmp.resolve("f.sock");
        StreamWriter w = StreamWriter.start(socket, full, false);
        byte[] data = new byte[9 << 20];
        new Random(2).nextBytes(data);

        assertThat(send(socket, data)).as("the whole stream was taken").isEqualTo(data.length);

        assertThatThrownBy(() -> w.finish(Duration.ofSeconds(30), true)).isInstanceOf(IOException.class)
                .hasMessageContaining("No space left on device");
    }

    @Test
    void itOutlivesTheProcessThatStartedIt() throws Exception {
        StreamWriter w = StreamWriter.start(tmp.resolve("o.sock"), tmp.resolve("state"));
        // started with setsid: its own session, so the daemon's end (or its terminal's) does not end it
        long sid = Long.parseLong(Files.readString(Path.of("/proc/" + pidOf(w) + "/stat")).split(" ")[5]);
        assertThat(sid).isEqualTo(pidOf(w)).isNotEqualTo(ProcessHandle.current().pid());
        send(tmp.resolve("o.sock"), new byte[10]);
        assertThat(w.finish(Duration.ofSeconds(30), true)).isEqualTo(10);
    }

    static long pidOf(StreamWriter w) {
        return w.pid();
    }
}
