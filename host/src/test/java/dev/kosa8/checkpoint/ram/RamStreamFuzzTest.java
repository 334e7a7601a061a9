package dev.kosa8.checkpoint.ram;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

/**
 * A saved machine's stream holds the guest's pages, and a damaged file must not take the daemon down: random
 * bytes, and streams with bytes flipped or cut, are read or refused with {@link RamStream.UnknownFormat},
 * never another exception, never a page beyond its block, within a bounded time.
 */
class RamStreamFuzzTest {
    private static final byte[] VALID = Streams.stream(Streams.machine(24, 11), 24, Streams.tail(11));

    @Property(tries = 2000)
    void randomBytesAreReadOrRefused(@ForAll @Size(max = 2000) byte[] bytes) {
        readSafely(bytes);
    }

    @Property(tries = 3000)
    void damagedStreamsAreReadOrRefused(@ForAll("damage") List<int[]> damage, @ForAll boolean cut) {
        byte[] s = VALID.clone();
        for (int[] d : damage) {
            s[d[0] % s.length] = (byte) d[1];
        }
        if (cut) {
            s = java.util.Arrays.copyOf(s, (damage.isEmpty() ? s.length : damage.getFirst()[0] % s.length));
        }
        readSafely(s);
    }

    @Provide
    Arbitrary<List<int[]>> damage() {
        // most of the framing is in the first few hundred bytes and every page header; aim there as often
        Arbitrary<Integer> at = Arbitraries.oneOf(Arbitraries.integers().between(0, 400),
                Arbitraries.integers().between(0, VALID.length - 1));
        return Arbitraries.integers().between(0, 255).flatMap(v -> at.map(a -> new int[] {a, v}))
                .list().ofMinSize(1).ofMaxSize(6);
    }

    private static void readSafely(byte[] bytes) {
        long start = System.nanoTime();
        try {
            List<RamStream.Block> blocks = new java.util.ArrayList<>();
            RamStream.Layout layout = RamStream.read(MemorySegment.ofArray(bytes), new RamStream.Pages() {
                @Override
                public void blocks(RamStream.Layout setup) {
                    blocks.addAll(setup.blocks());
                }

                @Override
                public void page(int block, long page, MemorySegment data) {
                    assertThat(page).isLessThan(blocks.get(block).pages());
                    assertThat(data.byteSize()).isEqualTo(RamStream.PAGE);
                }

                @Override
                public void zero(int block, long page, int fill) {
                    assertThat(page).isLessThan(blocks.get(block).pages());
                }
            });
            assertThat(layout.tailOffset()).isBetween((long) layout.prefix().length, (long) bytes.length);
        } catch (RamStream.UnknownFormat refused) {
            assertThat(refused).hasMessageContaining(" at byte ");
        } catch (java.io.IOException e) {
            throw new AssertionError("only UnknownFormat may come out of reading", e);
        }
        assertThat(System.nanoTime() - start).isLessThan(1_000_000_000L);
    }
}
