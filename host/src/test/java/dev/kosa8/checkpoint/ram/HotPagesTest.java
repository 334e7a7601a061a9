package dev.kosa8.checkpoint.ram;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HotPagesTest {
    @TempDir
    Path dir;

    private Path own() {
        return dir.resolve("sandbox-hot-pages");
    }

    private Path pool() {
        return dir.resolve("template-hot-pages");
    }

    @Test
    void aStoreWithNoListOfItsOwnStartsFromThePoolAndAddsToIt() throws Exception {
        HotPages template = new HotPages(pool(), null);
        template.remember(new int[] {7, 8, 9});
        HotPages sandbox = new HotPages(own(), pool());

        assertThat(sandbox.read(100)).as("nothing of its own yet: the pool's").containsExactly(7, 8, 9);

        sandbox.remember(new int[] {7, 8, 9, 40, 41});
        assertThat(sandbox.read(100)).containsExactly(7, 8, 9, 40, 41);
        assertThat(template.read(100)).as("what the sandbox learned, added behind what the pool had")
                .containsExactly(7, 8, 9, 40, 41);

        HotPages second = new HotPages(dir.resolve("second-hot-pages"), pool());
        assertThat(second.read(100)).as("the next sandbox starts from both").containsExactly(7, 8, 9, 40, 41);
        second.remember(new int[] {3, 40});
        assertThat(template.read(100)).containsExactly(7, 8, 9, 40, 41, 3);
        assertThat(sandbox.read(100)).as("a store's own list is its own").containsExactly(7, 8, 9, 40, 41);
    }

    @Test
    void thePoolKeepsWhatWasLearnedFirstUpToItsLimit() throws Exception {
        HotPages sandbox = new HotPages(own(), pool());
        sandbox.remember(IntStream.range(0, HotPages.POOL_MAX - 2).toArray());
        sandbox.remember(IntStream.range(50_000, 50_010).toArray());

        int[] kept = new HotPages(pool(), null).read(100_000);
        assertThat(kept).hasSize(HotPages.POOL_MAX);
        assertThat(kept[0]).isZero();
        assertThat(kept[HotPages.POOL_MAX - 1]).isEqualTo(50_001);
    }

    @Test
    void aPoolWhoseStoreIsGoneIsNeitherReadNorMadeAgain() throws Exception {
        Path gone = dir.resolve("removed-template/hot-pages");
        HotPages sandbox = new HotPages(own(), gone);

        assertThat(sandbox.read(100)).isEmpty();
        sandbox.remember(new int[] {1, 2});
        assertThat(sandbox.read(100)).containsExactly(1, 2);
        assertThat(Files.exists(gone.getParent())).as("the template's directory is not made again").isFalse();
    }

    @Test
    void aDamagedOrForeignListIsIgnoredNotSent() throws Exception {
        Files.write(pool(), ByteBuffer.allocate(12).putInt(2).putInt(5).putInt(500).array());
        HotPages sandbox = new HotPages(own(), pool());
        assertThat(sandbox.read(100)).as("names a page this machine does not have").isEmpty();

        Files.write(pool(), ByteBuffer.allocate(8).putInt(2).putInt(5).array());
        assertThat(sandbox.read(100)).as("cut short").isEmpty();

        Files.write(own(), new byte[] {1});
        assertThat(sandbox.read(100)).isEmpty();
        sandbox.remember(new int[] {4});
        assertThat(new HotPages(pool(), null).read(100)).as("a damaged pool is started again").containsExactly(4);
    }
}
