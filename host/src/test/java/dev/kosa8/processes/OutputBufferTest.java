package dev.kosa8.processes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.protocol.Message;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** A process's output kept by offset within a bound: each byte read once, what was dropped counted. */
class OutputBufferTest {
    private static final Message.Stream OUT = Message.Stream.STDOUT;
    private static final Message.Stream ERR = Message.Stream.STDERR;

    /** What the reader has seen: each byte at its offset, or counted as dropped. */
    private static final class Reader {
        final ByteArrayOutputStream written;
        final List<Message.Stream> streams;
        long next;
        long dropped;

        Reader(ByteArrayOutputStream written, List<Message.Stream> streams) {
            this.written = written;
            this.streams = streams;
        }

        OutputBuffer.Slice read(OutputBuffer b, int max) throws InterruptedException {
            OutputBuffer.Slice s = b.read(next, max, 0);
            assertThat(s.from()).isEqualTo(next);
            dropped += s.dropped();
            long at = next + s.dropped();
            byte[] all = written.toByteArray();
            for (OutputBuffer.Chunk c : s.chunks()) {
                assertThat(c.offset()).as("chunks follow one another").isEqualTo(at);
                assertThat(c.bytes()).as("bytes at offset " + at)
                        .isEqualTo(Arrays.copyOfRange(all, (int) at, (int) at + c.bytes().length));
                for (int k = 0; k < c.bytes().length; k++) {
                    assertThat(c.stream()).isEqualTo(streams.get((int) at + k));
                }
                at += c.bytes().length;
            }
            assertThat(s.next()).isEqualTo(at);
            assertThat(s.next() - s.from() - s.dropped()).isLessThanOrEqualTo(max);
            next = at;
            return s;
        }
    }

    /**
     * Whatever the writes and the reads' sizes, a reader that always starts at the last read's {@code next} gets
     * every byte exactly once, in order and tagged with its stream, or is told it was dropped; the buffer never
     * holds more than its capacity; nothing is dropped while everything fits.
     */
    @Property(tries = 400)
    void aReaderFromWhereItLeftOffGetsEachByteOnceOrIsToldItWasDropped(
            @ForAll @Size(min = 1, max = 60) List<@IntRange(min = 1, max = 300) Integer> writes,
            @ForAll @IntRange(min = 1, max = 700) int readEvery, @ForAll @IntRange(min = 1, max = 500) int readMax,
            @ForAll @IntRange(min = 1, max = 900) int capacity) throws Exception {
        OutputBuffer b = new OutputBuffer(capacity);
        ByteArrayOutputStream written = new ByteArrayOutputStream();
        List<Message.Stream> streams = new ArrayList<>();
        Reader r = new Reader(written, streams);
        int sinceRead = 0;
        for (int i = 0; i < writes.size(); i++) {
            byte[] bytes = new byte[writes.get(i)];
            for (int j = 0; j < bytes.length; j++) {
                bytes[j] = (byte) (written.size() * 31 + j);
            }
            Message.Stream stream = i % 3 == 0 ? ERR : OUT;
            b.append(stream, bytes);
            written.writeBytes(bytes);
            for (int j = 0; j < bytes.length; j++) {
                streams.add(stream);
            }
            assertThat(b.stats().buffered()).isLessThanOrEqualTo(capacity);
            assertThat(b.stats().end()).isEqualTo(written.size());
            sinceRead += bytes.length;
            if (sinceRead >= readEvery) {
                sinceRead = 0;
                r.read(b, readMax);
            }
        }
        b.close();
        OutputBuffer.Slice s;
        do {
            s = r.read(b, readMax);
        } while (!s.complete());
        assertThat(r.next).isEqualTo(written.size());
        assertThat(r.dropped).isLessThanOrEqualTo(b.stats().dropped());
        assertThat(b.stats().dropped()).isEqualTo(Math.max(0, written.size() - capacity));
        if (written.size() <= capacity) {
            assertThat(r.dropped).isZero();
        }
    }

    @Test
    void aReadFromBeforeWhatIsKeptSaysHowManyBytesWereDropped() throws Exception {
        OutputBuffer b = new OutputBuffer(4);
        b.append(OUT, "hello".getBytes());
        b.append(ERR, "world".getBytes());
        OutputBuffer.Slice s = b.read(0, 100, 0);
        assertThat(s.dropped()).isEqualTo(6);
        assertThat(s.chunks()).singleElement().satisfies(c -> {
            assertThat(c.stream()).isEqualTo(ERR);
            assertThat(c.offset()).isEqualTo(6);
            assertThat(new String(c.bytes())).isEqualTo("orld");
        });
        assertThat(s.next()).isEqualTo(10);
        assertThat(b.stats()).isEqualTo(new OutputBuffer.Stats(10, 4, 6, 4, false));
    }

    @Test
    void aReadPastTheEndIsRefusedNamingTheEnd() {
        OutputBuffer b = new OutputBuffer(64);
        b.append(OUT, "abc".getBytes());
        assertThatThrownBy(() -> b.read(4, 10, 0)).hasMessage("offset 4 is not in the output, which has 3 bytes so far");
        assertThatThrownBy(() -> b.read(-1, 10, 0)).hasMessageContaining("offset -1");
    }

    @Test
    void aReadAtTheEndWaitsForOutputOrTheEnd() throws Exception {
        OutputBuffer b = new OutputBuffer(64);
        CompletableFuture<OutputBuffer.Slice> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return b.read(0, 10, 30_000);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(100);
        assertThat(waiting).isNotDone();
        b.append(OUT, "x".getBytes());
        assertThat(waiting.get(10, TimeUnit.SECONDS).next()).isEqualTo(1);
        CompletableFuture<OutputBuffer.Slice> atEnd = CompletableFuture.supplyAsync(() -> {
            try {
                return b.read(1, 10, 30_000);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(100);
        assertThat(atEnd).isNotDone();
        b.close();
        OutputBuffer.Slice last = atEnd.get(10, TimeUnit.SECONDS);
        assertThat(last.complete()).isTrue();
        assertThat(last.chunks()).isEmpty();
    }

    @Test
    void aReadThatTimesOutReturnsNothingAndTheSameOffset() throws Exception {
        OutputBuffer b = new OutputBuffer(64);
        OutputBuffer.Slice s = b.read(0, 10, 50);
        assertThat(s.chunks()).isEmpty();
        assertThat(s.next()).isZero();
        assertThat(s.complete()).isFalse();
    }
}
