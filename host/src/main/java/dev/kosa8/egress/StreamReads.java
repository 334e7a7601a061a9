package dev.kosa8.egress;

import io.netty.channel.DefaultMaxMessagesRecvByteBufAllocator;
import java.util.function.IntSupplier;

/**
 * How a stream reads the broker's socket ({@link LinkStream}): one read per request, of the size the stream says at
 * that moment ({@link LinkStream#readSize}), so a read is what the guest's window and the network window have room for.
 */
final class StreamReads extends DefaultMaxMessagesRecvByteBufAllocator {
    private final IntSupplier size;

    StreamReads(IntSupplier size) {
        super(1);
        this.size = size;
    }

    @Override
    public Handle newHandle() {
        return new MaxMessageHandle() {
            @Override
            public int guess() {
                return size.getAsInt();
            }
        };
    }
}
