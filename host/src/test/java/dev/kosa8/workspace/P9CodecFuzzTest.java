package dev.kosa8.workspace;

import static dev.kosa8.workspace.P9Samples.MAX_FRAME;
import static dev.kosa8.workspace.P9Samples.bytes;
import static dev.kosa8.workspace.P9Samples.encode;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * Frames as a hostile guest could send them: random bytes, random bodies under a sound header,
 * and valid frames with bytes flipped, cut, added or the size field rewritten. Each must decode or
 * be refused with a {@link P9Exception} that says how to answer; no other exception, no
 * allocation beyond a small multiple of the frame, no decode taking longer than a second. A
 * stream of frames cut at random points must split back into exactly the frames sent, and a
 * stream of garbage must end in "need more bytes" or a fatal refusal after a bounded number of
 * steps.
 */
class P9CodecFuzzTest {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final int[] T_TYPES = {8, 12, 14, 16, 18, 20, 22, 24, 26, 30, 32, 40, 50, 52, 54, 70, 72, 74, 76,
        100, 102, 104, 108, 110, 116, 118, 120, 122};

    @Property(tries = 3000)
    void randomBytesDecodeOrAreRefused(@ForAll @Size(max = 512) byte[] frame) {
        decodeSafely(frame);
    }

    @Property(tries = 5000)
    void randomBodiesUnderASoundHeaderDecodeOrAreRefusedAndDecodingIsLossless(
            @ForAll("requestTypes") int type, @ForAll @IntRange(max = 0xffff) int tag,
            @ForAll @Size(max = 200) byte[] body) {
        ByteBuffer frame = ByteBuffer.allocate(P9Codec.HEADER + body.length).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(P9Codec.HEADER + body.length).put((byte) type).putShort((short) tag).put(body).flip();
        P9Framed decoded = decodeSafely(bytes(frame));
        if (decoded != null && !saturated(decoded.request())) {
            assertThat(bytes(encode(decoded.tag(), decoded.request()))).isEqualTo(bytes(frame));
        }
    }

    @Property(tries = 5000)
    void mutatedValidRequestsDecodeOrAreRefused(@ForAll("requests") P9Request request,
            @ForAll("mutations") List<int[]> mutations, @ForAll boolean fixSizeField) {
        decodeSafely(P9Samples.mutate(bytes(encode(1, request)), mutations, fixSizeField, 0));
    }

    @Property(tries = 2000)
    void mutatedValidRepliesDecodeOrAreRefused(@ForAll("replies") P9Reply reply,
            @ForAll("mutations") List<int[]> mutations, @ForAll boolean fixSizeField) {
        byte[] frame = P9Samples.mutate(bytes(encode(1, reply)), mutations, fixSizeField, 0);
        try {
            P9Codec.decodeReply(ByteBuffer.wrap(frame));
        } catch (P9Exception refused) {
            checkRefusal(refused);
        }
    }

    /**
     * A server awaiting a new session skips to the first Tversion: whatever surrounds it, what it finds is a
     * whole Tversion for 9P2000.L, and it is found no later than where one was put.
     */
    @Property(tries = 3000)
    void theNewSessionsTversionIsFoundWhateverComesBeforeIt(@ForAll @Size(max = 600) byte[] before,
            @ForAll @Size(max = 64) byte[] after, @ForAll int msize,
            @ForAll boolean put, @ForAll @IntRange(max = 16) int skip) throws P9Exception {
        byte[] version = bytes(encode(P9Codec.NOTAG, new P9Request.Version(msize, P9Operations.VERSION)));
        assertThat(version).hasSize(P9Codec.VERSION_FRAME);
        ByteBuffer stream = ByteBuffer.allocate(skip + before.length + version.length + after.length);
        stream.put(new byte[skip]).put(before);
        if (put) {
            stream.put(version);
        }
        stream.put(after).flip().position(skip);
        int at = P9Codec.findVersion(stream);
        if (put) {
            assertThat(at).isBetween(skip, skip + before.length);
        }
        if (at >= 0) {
            assertThat(at).isGreaterThanOrEqualTo(skip);
            P9Framed found = P9Codec.decodeRequest(stream.slice(at, P9Codec.VERSION_FRAME), MAX_FRAME);
            assertThat(found.tag()).isEqualTo(P9Codec.NOTAG);
            assertThat(found.request()).isInstanceOfSatisfying(P9Request.Version.class,
                    v -> assertThat(v.version()).isEqualTo(P9Operations.VERSION));
        }
    }

    @Property(tries = 2000)
    void validRequestsRoundTrip(@ForAll("requests") P9Request request, @ForAll @IntRange(max = 0xffff) int tag)
            throws P9Exception {
        assertThat(P9Codec.decodeRequest(encode(tag, request), MAX_FRAME)).isEqualTo(new P9Framed(tag, request));
    }

    @Property(tries = 2000)
    void validRepliesRoundTrip(@ForAll("replies") P9Reply reply, @ForAll @IntRange(max = 0xffff) int tag)
            throws P9Exception {
        assertThat(P9Codec.decodeReply(encode(tag, reply))).isEqualTo(new P9Response(tag, reply));
    }

    @Property(tries = 2000)
    void aStreamCutAtRandomPointsSplitsBackIntoTheFramesSent(
            @ForAll @Size(max = 12) List<@From("requests") P9Request> requests,
            @ForAll @Size(min = 1, max = 8) List<@IntRange(min = 1, max = 700) Integer> chunkSizes)
            throws P9Exception {
        ByteBuffer stream = ByteBuffer.allocate(requests.size() * MAX_FRAME);
        for (int i = 0; i < requests.size(); i++) {
            P9Codec.encodeRequest(i, requests.get(i), stream);
        }
        stream.flip();
        ByteBuffer in = ByteBuffer.allocate(2 * MAX_FRAME);
        int decoded = 0;
        for (int c = 0; stream.hasRemaining(); c++) {
            int n = Math.min(chunkSizes.get(c % chunkSizes.size()), stream.remaining());
            in.put(stream.slice(stream.position(), n));
            stream.position(stream.position() + n);
            in.flip();
            for (int len; (len = P9Codec.frameLength(in, MAX_FRAME)) >= 0 && len <= in.remaining(); ) {
                P9Framed f = P9Codec.decodeRequest(in.slice(in.position(), len), MAX_FRAME);
                // compared before compact(): a Write's data is a view of this buffer
                assertThat(f).isEqualTo(new P9Framed(decoded, requests.get(decoded)));
                decoded++;
                in.position(in.position() + len);
            }
            in.compact();
        }
        assertThat(decoded).isEqualTo(requests.size());
        assertThat(in.position()).as("bytes left over").isZero();
    }

    @Property(tries = 3000)
    void aStreamWithGarbageEndsInNeedMoreBytesOrAFatalRefusalWithinBoundedSteps(
            @ForAll @Size(max = 4) List<@From("requests") P9Request> before,
            @ForAll @Size(max = 300) byte[] garbage,
            @ForAll @Size(max = 4) List<@From("requests") P9Request> after) {
        ByteBuffer stream = ByteBuffer.allocate(8 * MAX_FRAME + garbage.length);
        before.forEach(r -> P9Codec.encodeRequest(0, r, stream));
        stream.put(garbage);
        after.forEach(r -> P9Codec.encodeRequest(0, r, stream));
        ByteBuffer in = stream.flip().asReadOnlyBuffer();
        int steps = 0;
        try {
            for (int len; (len = P9Codec.frameLength(in, MAX_FRAME)) >= 0 && len <= in.remaining(); ) {
                assertThat(len).isBetween(P9Codec.HEADER, MAX_FRAME);
                assertThat(++steps).isLessThanOrEqualTo(stream.limit() / P9Codec.HEADER);
                try {
                    P9Codec.decodeRequest(in.slice(in.position(), len), MAX_FRAME);
                } catch (P9Exception refused) {
                    // answered with Rlerror; the next frame starts right after this one
                    assertThat(refused.fatal()).isFalse();
                    checkRefusal(refused);
                }
                in.position(in.position() + len);
            }
        } catch (P9Exception fatal) {
            assertThat(fatal.fatal()).isTrue();
        }
        assertThat(in.position()).isLessThanOrEqualTo(in.limit());
    }

    /**
     * Decodes twice: the first run bounds the time and links whatever the JVM links lazily, the
     * second measures allocation, which must stay within a small multiple of the frame.
     */
    private static P9Framed decodeSafely(byte[] frame) {
        long start = System.nanoTime();
        P9Framed first = decodeOrNull(frame);
        assertThat(System.nanoTime() - start).as("nanoseconds to decode").isLessThan(1_000_000_000L);
        long allocatedBefore = THREADS.getCurrentThreadAllocatedBytes();
        decodeOrNull(frame);
        long allocated = THREADS.getCurrentThreadAllocatedBytes() - allocatedBefore;
        assertThat(allocated).as("bytes allocated decoding a frame of %d bytes", frame.length)
                .isLessThan(8192 + 16L * frame.length);
        return first;
    }

    private static P9Framed decodeOrNull(byte[] frame) {
        try {
            return P9Codec.decodeRequest(ByteBuffer.wrap(frame), MAX_FRAME);
        } catch (P9Exception refused) {
            checkRefusal(refused);
            return null;
        }
    }

    /** A refusal must say how to answer: a real errno, and a tag whenever the connection survives. */
    private static void checkRefusal(P9Exception e) {
        assertThat(e.errno()).isIn(P9Exception.EINVAL, P9Exception.ENAMETOOLONG, P9Exception.EPROTO,
                P9Exception.EMSGSIZE);
        assertThat(e.tag()).isBetween(-1, 0xffff);
        if (!e.fatal()) {
            assertThat(e.tag()).isNotNegative();
        }
        assertThat(e.getStackTrace()).isEmpty();
    }

    /** A count of 2^31 or more decodes as Integer.MAX_VALUE, so it does not re-encode to the same bytes. */
    private static boolean saturated(P9Request r) {
        return switch (r) {
            case P9Request.Read(_, _, int count) -> count == Integer.MAX_VALUE;
            case P9Request.Readdir(_, _, int count) -> count == Integer.MAX_VALUE;
            default -> false;
        };
    }

    @Provide
    Arbitrary<Integer> requestTypes() {
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(9, Arbitraries.of(Arrays.stream(T_TYPES).boxed().toList())),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0, 255)));
    }

    @Provide
    Arbitrary<P9Request> requests() {
        return Arbitraries.randomValue(P9Samples::request);
    }

    @Provide
    Arbitrary<P9Reply> replies() {
        return Arbitraries.randomValue(P9Samples::reply);
    }

    @Provide
    Arbitrary<List<int[]>> mutations() {
        return P9Samples.mutations();
    }
}
