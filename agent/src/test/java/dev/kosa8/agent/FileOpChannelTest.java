package dev.kosa8.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.protocol.FileOp;
import dev.kosa8.protocol.FileStat;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.WatchEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A file request on its channel, as the session starts it, against a recording host. */
class FileOpChannelTest {
    @TempDir
    Path dir;

    private static final class Host implements Outbox {
        final List<Message> sent = new CopyOnWriteArrayList<>();
        final List<Integer> done = new CopyOnWriteArrayList<>();

        @Override
        public boolean send(Message m) {
            sent.add(m);
            return true;
        }

        @Override
        public void done(int channel) {
            done.add(channel);
        }

        Message await(Predicate<Message> p) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() < deadline) {
                for (Message m : sent) {
                    if (p.test(m)) {
                        return m;
                    }
                }
                Thread.sleep(5);
            }
            throw new AssertionError("no such message; sent: " + sent);
        }
    }

    private final Host host = new Host();

    @Test
    void aStatIsAnsweredWithItsEntryThenExited() throws Exception {
        Files.writeString(dir.resolve("f"), "abc");
        FileOpChannel.start(new Message.FileRequest(3, "", new FileOp.Stat(dir + "/f", false)), host);
        host.await(m -> m instanceof Message.Exited);
        var entries = (Message.FileEntries) host.sent.getFirst();
        assertThat(entries.entries()).extracting(FileStat::size).containsExactly(3L);
    }

    @Test
    void aFailureIsAnsweredWithItsCode() throws Exception {
        FileOpChannel.start(new Message.FileRequest(4, "", new FileOp.Remove(dir + "/none", false)), host);
        var f = (Message.Failed) host.await(m -> m instanceof Message.Failed);
        assertThat(f.code()).isEqualTo(Message.ErrorCode.NOT_FOUND);
        assertThat(host.sent.stream().noneMatch(m -> m instanceof Message.Exited)).isTrue();
    }

    @Test
    void aLongListingComesInBatchesThatEachFitAFrame() throws Exception {
        String longName = "n".repeat(250);
        for (int i = 0; i < 700; i++) {
            Files.writeString(dir.resolve(longName.substring(3) + i), "");
        }
        FileOpChannel.start(new Message.FileRequest(5, "", new FileOp.ListDir(dir.toString(), 1, 1000)), host);
        host.await(m -> m instanceof Message.Exited);
        List<Message.FileEntries> batches = new ArrayList<>();
        host.sent.stream().filter(m -> m instanceof Message.FileEntries).forEach(m -> batches.add(
                (Message.FileEntries) m));
        assertThat(batches.size()).isGreaterThan(1);
        assertThat(batches.stream().mapToInt(b -> b.entries().size()).sum()).isEqualTo(700);
        for (var b : batches) {
            assertThat(dev.kosa8.protocol.Codec.encode(b).length).isLessThan(dev.kosa8.protocol.Limits.MAX_FRAME);
        }
    }

    @Test
    void aWatchStartsReportsAndEndsAtASignal() throws Exception {
        Channel c = FileOpChannel.start(new Message.FileRequest(6, "", new FileOp.Watch(dir.toString(), false)),
                host);
        host.await(m -> m instanceof Message.Started);
        Files.writeString(dir.resolve("x"), "1");
        host.await(m -> m instanceof Message.WatchEvents e && e.events().contains(
                new WatchEvent(WatchEvent.Kind.CREATE, dir + "/x")));
        c.onSignal(1);
        host.await(m -> m instanceof Message.Exited);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (host.done.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(5); // done follows Exited
        }
        assertThat(host.done).containsExactly(6);
    }

    @Test
    void theAgentKeepsAtMostItsWatches() throws Exception {
        List<Channel> open = new ArrayList<>();
        try {
            for (int i = 0; i < FileOpChannel.MAX_WATCHES; i++) {
                open.add(FileOpChannel.start(new Message.FileRequest(100 + i, "", new FileOp.Watch(dir.toString(),
                        false)), host));
            }
            for (int i = 0; i < FileOpChannel.MAX_WATCHES; i++) {
                int ch = 100 + i;
                host.await(m -> m instanceof Message.Started s && s.channel() == ch);
            }
            assertThat(FileOpChannel.start(new Message.FileRequest(99, "", new FileOp.Watch(dir.toString(), false)),
                    host)).isNull();
            var f = (Message.Failed) host.await(m -> m instanceof Message.Failed x && x.channel() == 99);
            assertThat(f.code()).isEqualTo(Message.ErrorCode.LIMIT);
        } finally {
            open.forEach(Channel::hangUp);
        }
        for (int i = 0; i < FileOpChannel.MAX_WATCHES; i++) {
            int ch = 100 + i;
            host.await(m -> m instanceof Message.Exited x && x.channel() == ch);
        }
    }
}
