package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http2.DefaultHttp2Connection;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2UnknownFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2Stream;
import org.junit.jupiter.api.Test;

/**
 * What an upstream's server could queue without end for a guest that does not read, which flow control does not
 * count ({@link UpstreamHttp2.FrameGuard}): frames of unknown types, and interim (1xx) heads.
 */
class UpstreamFrameGuardTest {
    @Test
    void unknownFramesAreDroppedAndInterimHeadsPastTheBoundResetTheStream() throws Exception {
        var connection = new DefaultHttp2Connection(false);
        connection.local().createStream(1, false);
        Http2FrameStream stream = frameStream(1);
        EmbeddedChannel ch = new EmbeddedChannel(new UpstreamHttp2.FrameGuard(connection));

        ByteBuf payload = Unpooled.buffer().writeBytes(new byte[16 * 1024]);
        ch.writeInbound(new DefaultHttp2UnknownFrame((byte) 0x42, new io.netty.handler.codec.http2.Http2Flags(),
                payload).stream(stream));
        assertThat(payload.refCnt()).as("an unknown frame is released where it arrives").isZero();
        assertThat((Object) ch.readInbound()).as("and not passed to the stream").isNull();

        for (int i = 0; i < UpstreamHttp2.FrameGuard.MAX_INTERIM; i++) {
            ch.writeInbound(head("103", stream));
            assertThat((Object) ch.readInbound()).as("interim head %d", i + 1).isInstanceOf(Http2HeadersFrame.class);
        }
        ch.writeInbound(head("103", stream));
        assertThat((Object) ch.readInbound()).as("one interim head past the bound").isNull();
        Http2ResetFrame reset = ch.readOutbound();
        assertThat(reset.errorCode()).isEqualTo(Http2Error.ENHANCE_YOUR_CALM.code());
        assertThat(reset.stream().id()).isEqualTo(1);

        // a final head, on a stream with no interim ones, passes
        connection.local().createStream(3, false);
        Http2FrameStream other = frameStream(3);
        ch.writeInbound(head("200", other));
        assertThat((Object) ch.readInbound()).isInstanceOf(Http2HeadersFrame.class);
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    /** The codec's handle of stream {@code id}, as a frame names it. */
    private static Http2FrameStream frameStream(int id) {
        return new Http2FrameStream() {
            @Override
            public int id() {
                return id;
            }

            @Override
            public Http2Stream.State state() {
                return Http2Stream.State.OPEN;
            }
        };
    }

    private static Http2HeadersFrame head(String status, Http2FrameStream stream) {
        return new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().status(status)).stream(stream);
    }
}
