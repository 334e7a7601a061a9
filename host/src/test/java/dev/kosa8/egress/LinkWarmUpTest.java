package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import java.nio.file.Path;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The daemon's warm-up of its network path: whole downloads through a real broker and link of its own, with the
 * network window, and nothing left behind.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LinkWarmUpTest {
    @TempDir
    Path dir;
    EventLoopGroup group;
    final LinkedBlockingQueue<String> log = new LinkedBlockingQueue<>();

    @BeforeEach
    void start() {
        group = new MultiThreadIoEventLoopGroup(2, EpollIoHandler.newFactory());
    }

    @AfterEach
    void stop() throws Exception {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    @Test
    void eachDownloadComesWholeThroughTheBrokerAndTheLinkAndItsDirectoryGoes() throws Exception {
        long bytes = (3L << 20) + 7;
        Path work = dir.resolve("warm-up");
        LinkWarmUp.Moved m = LinkWarmUp.run(work, 3, bytes, group, log::add);
        assertThat(m.downloads()).isEqualTo(3);
        // each answer is its head and the body, whole (the upstream counted what it served; run checks it)
        assertThat(m.bytes()).isBetween(3 * bytes, 3 * (bytes + 200));
        assertThat(work).doesNotExist();
        assertThat(log).as("the link said nothing went wrong").noneMatch(l -> l.contains("reset")
                || l.contains("giving up") || l.contains("cannot"));
    }
}
