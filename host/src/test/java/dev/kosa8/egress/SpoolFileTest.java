package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A spool file written and read back on the spool's own threads: the bytes come back as they went in, in order. */
class SpoolFileTest {
    @TempDir
    Path dir;

    @Test
    void whatIsAppendedOnTheSpoolsThreadsIsReadBackIntact() throws Exception {
        SpoolBudget budget = new SpoolBudget(dir);
        PooledByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
        Random r = new Random(7);
        MessageDigest in = MessageDigest.getInstance("SHA-256");
        long total = 0;
        try (SpoolFile f = budget.open()) {
            for (int i = 0; i < 2000; i++) {
                byte[] chunk = new byte[1 + r.nextInt(40_000)];
                r.nextBytes(chunk);
                in.update(chunk);
                total += chunk.length;
                ByteBuf b = alloc.directBuffer(chunk.length).writeBytes(chunk);
                assertThat(f.append(b, () -> { })).isTrue();
            }
            f.written().get(30, TimeUnit.SECONDS);
            assertThat(f.failure()).isNull();
            assertThat(f.size()).isEqualTo(total);
            MessageDigest out = MessageDigest.getInstance("SHA-256");
            CountDownLatch[] ready = {new CountDownLatch(1)};
            SpoolReader reader = new SpoolReader(f, f.size(), SpooledRequest.CHUNK, () -> ready[0].countDown());
            long got = 0;
            while (!reader.isEndOfInput()) {
                ByteBuf b = reader.readChunk(alloc);
                if (b == null) {
                    assertThat(ready[0].await(10, TimeUnit.SECONDS)).isTrue();
                    ready[0] = new CountDownLatch(1);
                    continue;
                }
                got += b.readableBytes();
                out.update(b.nioBuffer());
                b.release();
            }
            reader.close();
            assertThat(got).isEqualTo(total);
            assertThat(out.digest()).isEqualTo(in.digest());
        }
        assertThat(budget.used()).isZero();
    }
}
