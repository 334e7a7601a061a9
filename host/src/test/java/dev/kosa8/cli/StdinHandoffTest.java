package dev.kosa8.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class StdinHandoffTest {
    @Test
    void aClosedViewGivesUpItsBlockedReadAndTheNextViewGetsWhatIsTypedNext() throws Exception {
        PipedOutputStream typed = new PipedOutputStream();
        StdinHandoff stdin = new StdinHandoff(new PipedInputStream(typed));

        StdinHandoff.View first = stdin.view();
        typed.write("one\n".getBytes(StandardCharsets.UTF_8));
        typed.flush();
        byte[] buf = new byte[64];
        assertThat(new String(buf, 0, first.read(buf, 0, buf.length), StandardCharsets.UTF_8)).isEqualTo("one\n");

        // the first command's pump waits for more; its command ends, and its view is closed under it
        CompletableFuture<Integer> blocked = CompletableFuture.supplyAsync(() -> {
            try {
                return first.read(new byte[64], 0, 64);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        Thread.sleep(100);
        assertThat(blocked).isNotDone();
        first.close();
        assertThat(blocked.get(5, TimeUnit.SECONDS)).isEqualTo(-1);

        StdinHandoff.View second = stdin.view();
        typed.write("two\n".getBytes(StandardCharsets.UTF_8));
        typed.flush();
        assertThat(new String(buf, 0, second.read(buf, 0, buf.length), StandardCharsets.UTF_8)).isEqualTo("two\n");

        typed.close();
        assertThat(second.read(buf, 0, buf.length)).isEqualTo(-1);
        assertThat(stdin.view().read(buf, 0, buf.length)).as("stdin's end holds for every later view").isEqualTo(-1);
    }

    @Test
    void theRestOfAChunkPartlyReadWhenItsViewClosesGoesToTheNextView() throws Exception {
        PipedOutputStream typed = new PipedOutputStream();
        StdinHandoff stdin = new StdinHandoff(new PipedInputStream(typed));
        StdinHandoff.View first = stdin.view();
        typed.write("abcdef".getBytes(StandardCharsets.UTF_8));
        typed.flush();
        byte[] two = new byte[2];
        assertThat(first.read(two, 0, 2)).isEqualTo(2);
        assertThat(new String(two, StandardCharsets.UTF_8)).isEqualTo("ab");
        first.close(); // its reader never calls again: the rest is handed on all the same
        byte[] buf = new byte[64];
        StdinHandoff.View second = stdin.view();
        assertThat(new String(buf, 0, second.read(buf, 0, buf.length), StandardCharsets.UTF_8)).isEqualTo("cdef");
    }

    @Test
    void stdinIsReadAheadOfTheCommandBySixteenChunksAtMost() throws Exception {
        java.util.concurrent.atomic.AtomicInteger reads = new java.util.concurrent.atomic.AtomicInteger();
        java.io.InputStream endless = new java.io.InputStream() {
            @Override
            public int read() {
                return 'x';
            }

            @Override
            public int read(byte[] b, int off, int len) {
                reads.incrementAndGet();
                java.util.Arrays.fill(b, off, off + len, (byte) 'x');
                return len;
            }
        };
        StdinHandoff stdin = new StdinHandoff(endless);
        Thread.sleep(300);
        assertThat(reads.get()).as("a file piped in is not read into memory").isEqualTo(16);
        StdinHandoff.View v = stdin.view();
        byte[] buf = new byte[64 * 1024];
        long got = 0;
        while (got < 1 << 20) {
            got += v.read(buf, 0, buf.length);
        }
        assertThat(reads.get()).as("it is read as the command takes it").isBetween(64, 64 + 17);
    }
}
