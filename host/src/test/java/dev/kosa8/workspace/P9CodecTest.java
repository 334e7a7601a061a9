package dev.kosa8.workspace;

import static dev.kosa8.workspace.P9Samples.MAX_FRAME;
import static dev.kosa8.workspace.P9Samples.bytes;
import static dev.kosa8.workspace.P9Samples.encode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.lang.management.ManagementFactory;
import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class P9CodecTest {
    private static final int TAG = 0x0102;

    @Test
    void everyRequestTypeSurvivesARoundTrip() throws P9Exception {
        List<P9Request> all = P9Samples.allRequests();
        assertThat(all.stream().map(Object::getClass).collect(Collectors.toSet()))
                .as("one sample of every request type")
                .isEqualTo(Set.of(P9Request.class.getPermittedSubclasses()));
        for (P9Request request : all) {
            P9Framed back = P9Codec.decodeRequest(encode(TAG, request), MAX_FRAME);
            // record equality compares a ByteBuffer's remaining bytes, so Write's data is compared by content
            assertThat(back).isEqualTo(new P9Framed(TAG, request));
        }
    }

    @Test
    void everyReplyTypeSurvivesARoundTrip() throws P9Exception {
        List<P9Reply> all = P9Samples.allReplies();
        assertThat(all.stream().map(Object::getClass).collect(Collectors.toSet()))
                .as("one sample of every reply type")
                .isEqualTo(Set.of(P9Reply.class.getPermittedSubclasses()));
        for (P9Reply reply : all) {
            assertThat(P9Codec.decodeReply(encode(TAG, reply))).isEqualTo(new P9Response(TAG, reply));
        }
    }

    @Test
    void tversionMatchesTheSpecByteForByte() throws P9Exception {
        byte[] golden = HexFormat.of().parseHex(""
                + "15000000" // size 21, little-endian, counting itself
                + "64" // Tversion = 100
                + "ffff" // NOTAG
                + "00200000" // msize 8192
                + "0800" + "3950323030302e4c"); // "9P2000.L"
        P9Request version = new P9Request.Version(8192, "9P2000.L");
        assertThat(bytes(encode(P9Codec.NOTAG, version))).isEqualTo(golden);
        assertThat(P9Codec.decodeRequest(ByteBuffer.wrap(golden), MAX_FRAME))
                .isEqualTo(new P9Framed(P9Codec.NOTAG, version));
    }

    @Test
    void rgetattrMatchesTheSpecByteForByte() throws P9Exception {
        byte[] golden = HexFormat.of().parseHex(""
                + "a0000000" // size 160
                + "19" // Rgetattr = 25
                + "0201" // tag 0x0102
                + "ff3f000000000000" // valid
                + "00" + "04030201" + "8877665544332211" // qid type, version, path
                + "a4810000" // mode 0100644
                + "e8030000" // uid 1000
                + "e9030000" // gid 1001
                + "0200000000000000" // nlink
                + "0300000000000000" // rdev
                + "0500000000000000" // size
                + "0010000000000000" // blksize 4096
                + "0800000000000000" // blocks
                + "0b00000000000000" + "0c00000000000000" // atime sec, nsec
                + "0d00000000000000" + "0e00000000000000" // mtime
                + "0f00000000000000" + "1000000000000000" // ctime
                + "1100000000000000" + "1200000000000000" // btime
                + "1300000000000000" // gen
                + "1400000000000000"); // data_version
        assertThat(golden).hasSize(160);
        assertThat(bytes(encode(TAG, P9Samples.getattr()))).isEqualTo(golden);
        assertThat(P9Codec.decodeReply(ByteBuffer.wrap(golden))).isEqualTo(new P9Response(TAG, P9Samples.getattr()));
    }

    @Test
    void namesAreByteStringsAndKeepEveryByteIncludingSlash() throws P9Exception {
        var mkdir = new P9Request.Mkdir(0, P9Samples.ODD_NAME, 0755, 0);
        ByteBuffer frame = encode(TAG, mkdir);
        // "caf" C3 A9 "/" " " FF 01: the UTF-8 bytes of "café" arrive as two chars, unchanged
        assertThat(Arrays.copyOfRange(bytes(frame), 11, 11 + 11))
                .isEqualTo(HexFormat.of().parseHex("0900636166c3a92f20ff01"));
        assertThat(P9Codec.decodeRequest(frame, MAX_FRAME).request()).isEqualTo(mkdir);
    }

    @Test
    void aNulInANameIsAnsweredWithEinvalUnderTheFramesTag() {
        P9Exception e = refusal(encode(TAG, new P9Request.Walk(0, 1, List.of("ok", "bad\0name"))));
        assertThat(e.errno()).isEqualTo(P9Exception.EINVAL);
        assertThat(e.tag()).isEqualTo(TAG);
        assertThat(e.fatal()).isFalse();
        assertThat(e).hasMessageContaining("NUL");
    }

    @Test
    void aSizeFieldBelowTheHeaderIsFatal() {
        ByteBuffer frame = withSize(encode(TAG, new P9Request.Clunk(1)), 3);
        P9Exception e = refusal(frame);
        assertThat(e.fatal()).isTrue();
        assertThat(e.errno()).isEqualTo(P9Exception.EINVAL);
        P9Exception peeked = catchThrowableOfType(P9Exception.class, () -> P9Codec.frameLength(frame, MAX_FRAME));
        assertThat(peeked.fatal()).isTrue();
    }

    @Test
    void aSizeFieldAboveMsizeIsFatalEvenBeforeTheFrameArrives() {
        ByteBuffer header = ByteBuffer.wrap(new byte[] {1, 0x20, 0, 0}); // 8193
        P9Exception e = catchThrowableOfType(P9Exception.class, () -> P9Codec.frameLength(header, MAX_FRAME));
        assertThat(e.fatal()).isTrue();
        assertThat(e.errno()).isEqualTo(P9Exception.EMSGSIZE);
        assertThat(e.tag()).isEqualTo(-1);

        ByteBuffer huge = withSize(encode(TAG, new P9Request.Clunk(1)), 0xffff_ffff);
        P9Exception whole = refusal(huge);
        assertThat(whole.fatal()).isTrue();
        assertThat(whole.errno()).isEqualTo(P9Exception.EMSGSIZE);
        assertThat(whole).hasMessageContaining("4294967295");
    }

    @Test
    void aSizeFieldThatDisagreesWithTheFrameIsFatal() {
        ByteBuffer frame = encode(TAG, new P9Request.Clunk(1));
        P9Exception e = refusal(withSize(frame, frame.remaining() + 1));
        assertThat(e.fatal()).isTrue();
        assertThat(e.tag()).isEqualTo(TAG);
    }

    @Test
    void aFrameShorterThanTheHeaderHasNoTag() {
        P9Exception e = refusal(ByteBuffer.wrap(new byte[] {7, 0, 0, 0, 120}));
        assertThat(e.fatal()).isTrue();
        assertThat(e.tag()).isEqualTo(-1);
    }

    @Test
    void aTruncatedBodyIsAnsweredWithEinval() {
        ByteBuffer frame = encode(TAG, new P9Request.Getattr(1, 0x3fff));
        int shorter = frame.remaining() - 3;
        ByteBuffer cut = withSize(frame.limit(shorter), shorter);
        P9Exception e = refusal(cut);
        assertThat(e.errno()).isEqualTo(P9Exception.EINVAL);
        assertThat(e.fatal()).isFalse();
        assertThat(e.tag()).isEqualTo(TAG);
    }

    @Test
    void trailingBytesAfterTheBodyAreAnsweredWithEinval() {
        ByteBuffer frame = encode(TAG, new P9Request.Clunk(1));
        ByteBuffer longer = ByteBuffer.allocate(frame.remaining() + 2).put(frame).put(new byte[] {1, 2}).flip();
        P9Exception e = refusal(withSize(longer, longer.remaining()));
        assertThat(e.errno()).isEqualTo(P9Exception.EINVAL);
        assertThat(e.fatal()).isFalse();
        assertThat(e).hasMessageContaining("trailing");
    }

    @Test
    void aWalkOfSeventeenNamesIsRefusedAndSixteenAreAccepted() throws P9Exception {
        P9Exception e = refusal(encode(TAG, new P9Request.Walk(0, 1, Collections.nCopies(17, "a"))));
        assertThat(e.errno()).isEqualTo(P9Exception.EINVAL);
        assertThat(e.fatal()).isFalse();
        var sixteen = new P9Request.Walk(0, 1, Collections.nCopies(16, "a"));
        assertThat(P9Codec.decodeRequest(encode(TAG, sixteen), MAX_FRAME).request()).isEqualTo(sixteen);
    }

    @Test
    void aStringLengthPastTheEndOfTheFrameIsEinvalAndAllocatesNothingLikeIt() {
        // a 20-byte Tmkdir whose name claims 65535 bytes
        ByteBuffer frame = ByteBuffer.wrap(HexFormat.of().parseHex("14000000" + "48" + "0201" + "00000000"
                + "ffff" + "616263" + "00000000")).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(frame.getInt(0)).isEqualTo(frame.remaining());
        P9Exception e = refusal(frame); // also links whatever the JVM links lazily
        assertThat(e.errno()).isEqualTo(P9Exception.EINVAL);
        assertThat(e.fatal()).isFalse();
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        try {
            P9Codec.decodeRequest(frame, MAX_FRAME);
        } catch (P9Exception expected) {
            // measured, not checked again
        }
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertThat(allocated).as("bytes allocated decoding a 20-byte frame").isLessThan(2048);
    }

    @Test
    void aStringOverMaxStringIsEnametoolong() {
        P9Exception e = refusal(encode(TAG, new P9Request.Symlink(0, "l", "x".repeat(P9Codec.MAX_STRING + 1), 0)),
                P9Codec.MAX_STRING * 2);
        assertThat(e.errno()).isEqualTo(P9Exception.ENAMETOOLONG);
        assertThat(e.fatal()).isFalse();
    }

    @Test
    void anUnknownMessageTypeIsEproto() {
        ByteBuffer frame = encode(TAG, new P9Request.Clunk(1));
        frame.put(4, (byte) 112); // 9P2000 Topen, which 9P2000.L replaced with Tlopen
        P9Exception e = refusal(frame);
        assertThat(e.errno()).isEqualTo(P9Exception.EPROTO);
        assertThat(e.fatal()).isFalse();
        assertThat(e.tag()).isEqualTo(TAG);
    }

    @Test
    void aReadCountOfTwoToTheThirtyOneOrMoreSaturatesInsteadOfTurningNegative() throws P9Exception {
        ByteBuffer frame = encode(TAG, new P9Request.Read(1, 0, 0)).order(ByteOrder.LITTLE_ENDIAN);
        frame.putInt(frame.limit() - 4, 0xffff_fff0);
        assertThat(P9Codec.decodeRequest(frame, MAX_FRAME).request())
                .isEqualTo(new P9Request.Read(1, 0, Integer.MAX_VALUE));
    }

    @Test
    void writeDataIsAReadOnlyViewOfTheFrameNotACopy() throws P9Exception {
        ByteBuffer frame = encode(TAG, new P9Request.Write(1, 0, ByteBuffer.wrap(new byte[] {1, 2, 3})));
        var write = (P9Request.Write) P9Codec.decodeRequest(frame, MAX_FRAME).request();
        assertThat(write.data().isReadOnly()).isTrue();
        frame.put(frame.limit() - 1, (byte) 99);
        assertThat(write.data().get(2)).isEqualTo((byte) 99);
    }

    @Test
    void decodingLeavesTheCallersBufferAloneWhateverItsOrderAndOffset() throws P9Exception {
        ByteBuffer frame = encode(TAG, new P9Request.Lopen(3, 2));
        ByteBuffer direct = ByteBuffer.allocateDirect(100).position(40);
        direct.put(frame.duplicate()).flip().position(40);
        assertThat(direct.order()).isEqualTo(ByteOrder.BIG_ENDIAN);
        assertThat(P9Codec.frameLength(direct, MAX_FRAME)).isEqualTo(frame.remaining());
        assertThat(P9Codec.decodeRequest(direct, MAX_FRAME).request()).isEqualTo(new P9Request.Lopen(3, 2));
        assertThat(direct.position()).isEqualTo(40);
        assertThat(direct.limit()).isEqualTo(40 + frame.remaining());
        assertThat(direct.order()).isEqualTo(ByteOrder.BIG_ENDIAN);
    }

    @Test
    void frameLengthNeedsFourBytesAndDoesNotConsumeThem() throws P9Exception {
        ByteBuffer partial = ByteBuffer.wrap(new byte[] {11, 0, 0});
        assertThat(P9Codec.frameLength(partial, MAX_FRAME)).isEqualTo(-1);
        ByteBuffer enough = ByteBuffer.wrap(new byte[] {11, 0, 0, 0});
        assertThat(P9Codec.frameLength(enough, MAX_FRAME)).isEqualTo(11);
        assertThat(enough.position()).isZero();
    }

    @Test
    void aReplyThatDoesNotFitLeavesTheBufferWhereItWas() {
        ByteBuffer out = ByteBuffer.allocate(100).position(10);
        assertThatThrownBy(() -> P9Codec.encodeReply(TAG, P9Samples.getattr(), out))
                .isInstanceOf(BufferOverflowException.class);
        assertThat(out.position()).isEqualTo(10);
    }

    @Test
    void aCharThatIsNotAByteCannotBeEncoded() {
        ByteBuffer out = ByteBuffer.allocate(100);
        assertThatThrownBy(() -> P9Codec.encodeReply(TAG, new P9Reply.Readlink("\u20ac"), out))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("U+20ac");
        assertThat(out.position()).isZero();
    }

    @Test
    void finishReadWrapsDataAlreadyInTheBufferIntoAnRread() throws P9Exception {
        ByteBuffer out = ByteBuffer.allocate(64);
        int frameStart = 5;
        out.put(frameStart + P9Codec.READ_DATA_OFFSET, new byte[] {10, 20, 30});
        P9Codec.finishRead(out, frameStart, TAG, 3);
        assertThat(out.position()).isEqualTo(frameStart + P9Codec.READ_DATA_OFFSET + 3);
        ByteBuffer frame = out.duplicate().flip().position(frameStart);
        assertThat(P9Codec.decodeReply(frame))
                .isEqualTo(new P9Response(TAG, new P9Reply.Read(ByteBuffer.wrap(new byte[] {10, 20, 30}))));
        assertThatThrownBy(() -> P9Codec.finishRead(out, frameStart, TAG, 64))
                .isInstanceOf(BufferOverflowException.class);
    }

    @Test
    void putDirEntryPacksEntriesUntilTheLimitAndFinishReaddirFramesThem() throws P9Exception {
        ByteBuffer out = ByteBuffer.allocate(11 + 24 + 1 + 24 + 3 + 10);
        out.position(P9Codec.READ_DATA_OFFSET);
        assertThat(P9Codec.putDirEntry(out, P9Samples.DIR, 1, (byte) 4, ".")).isTrue();
        assertThat(P9Codec.putDirEntry(out, P9Samples.FILE, 2, (byte) 8, "a\u00ff/")).isTrue();
        int before = out.position();
        assertThat(P9Codec.putDirEntry(out, P9Samples.LINK, 3, (byte) 10, "too long")).isFalse();
        assertThat(out.position()).isEqualTo(before);
        P9Codec.finishReaddir(out, 0, TAG, before - P9Codec.READ_DATA_OFFSET);

        P9Response response = P9Codec.decodeReply(out.flip());
        assertThat(response.tag()).isEqualTo(TAG);
        assertThat(P9Codec.dirEntries(((P9Reply.Readdir) response.reply()).data())).containsExactly(
                new P9Codec.DirEntry(P9Samples.DIR, 1, (byte) 4, "."),
                new P9Codec.DirEntry(P9Samples.FILE, 2, (byte) 8, "a\u00ff/"));
    }

    private static P9Exception refusal(ByteBuffer frame) {
        return refusal(frame, MAX_FRAME);
    }

    private static P9Exception refusal(ByteBuffer frame, int maxFrame) {
        P9Exception e = catchThrowableOfType(P9Exception.class, () -> P9Codec.decodeRequest(frame, maxFrame));
        assertThat(e).as("decoding should have been refused").isNotNull();
        return e;
    }

    private static ByteBuffer withSize(ByteBuffer frame, int size) {
        frame.duplicate().order(ByteOrder.LITTLE_ENDIAN).putInt(frame.position(), size);
        return frame;
    }
}
