package dev.kosa8.vm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * QEMU's return path during a lazy load is read from a process that runs the guest: messages as QEMU 7.2 writes
 * them are decoded, and anything else (random bytes, valid messages damaged or cut) is refused with an
 * {@link IOException}, never another exception, never a read past a message's declared length.
 */
class ReturnPathTest {
    private static ReadableByteChannel of(byte[] b) {
        return Channels.newChannel(new ByteArrayInputStream(b));
    }

    private static byte[] message(int type, byte[] payload) {
        return ByteBuffer.allocate(4 + payload.length).putShort((short) type).putShort((short) payload.length)
                .put(payload).array();
    }

    private static final byte[] VALID = concat(
            message(ReturnPath.PONG, ByteBuffer.allocate(4).putInt(1).array()),
            message(ReturnPath.REQ_PAGES_ID, ByteBuffer.allocate(13 + 11).putLong(0x7194000L).putInt(4096)
                    .put((byte) 11).put("microvm.ram".getBytes()).array()),
            message(ReturnPath.REQ_PAGES, ByteBuffer.allocate(12).putLong(0x1000L).putInt(4096).array()),
            message(ReturnPath.SHUT, ByteBuffer.allocate(4).putInt(0).array()));

    private static byte[] concat(byte[]... parts) {
        ByteBuffer b = ByteBuffer.allocate(java.util.Arrays.stream(parts).mapToInt(p -> p.length).sum());
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.array();
    }

    @Test
    void messagesAsQemuWritesThemAreDecoded() throws IOException {
        ReadableByteChannel in = of(VALID);
        assertThat(ReturnPath.read(in)).isEqualTo(new ReturnPath.Pong(1));
        assertThat(ReturnPath.read(in)).isEqualTo(new ReturnPath.RequestPages("microvm.ram", 0x7194000L, 4096));
        assertThat(ReturnPath.read(in)).isEqualTo(new ReturnPath.RequestPages(null, 0x1000L, 4096));
        assertThat(ReturnPath.read(in)).isEqualTo(new ReturnPath.Shut(false));
        assertThatThrownBy(() -> ReturnPath.read(in)).isInstanceOf(EOFException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void wrongLengthsUnknownTypesAndCutMessagesAreRefused() {
        assertThatThrownBy(() -> ReturnPath.read(of(message(ReturnPath.PONG, new byte[3]))))
                .isInstanceOf(IOException.class).hasMessageContaining("not 4");
        assertThatThrownBy(() -> ReturnPath.read(of(message(9, new byte[0]))))
                .isInstanceOf(IOException.class).hasMessageContaining("type 9");
        assertThatThrownBy(() -> ReturnPath.read(of(message(ReturnPath.REQ_PAGES_ID,
                ByteBuffer.allocate(14).putLong(0).putInt(4096).put((byte) 5).array()))))
                .isInstanceOf(IOException.class).hasMessageContaining("naming a block of 5 bytes");
        assertThatThrownBy(() -> ReturnPath.read(of(new byte[] {0, 2, (byte) 0xff, (byte) 0xff})))
                .isInstanceOf(IOException.class).hasMessageContaining("65535 bytes");
        assertThatThrownBy(() -> ReturnPath.read(of(java.util.Arrays.copyOf(VALID, 6))))
                .isInstanceOf(EOFException.class).hasMessageContaining("middle of a message");
    }

    @Property(tries = 2000)
    void randomBytesAreDecodedOrRefused(@ForAll @Size(max = 600) byte[] bytes) {
        readAll(bytes);
    }

    @Property(tries = 2000)
    void damagedMessagesAreDecodedOrRefused(@ForAll("damage") List<int[]> damage, @ForAll boolean cut) {
        byte[] b = VALID.clone();
        for (int[] d : damage) {
            b[d[0] % b.length] = (byte) d[1];
        }
        if (cut) {
            b = java.util.Arrays.copyOf(b, damage.getFirst()[0] % b.length);
        }
        readAll(b);
    }

    @Provide
    Arbitrary<List<int[]>> damage() {
        return Arbitraries.integers().between(0, 255)
                .flatMap(v -> Arbitraries.integers().between(0, VALID.length - 1).map(a -> new int[] {a, v}))
                .list().ofMinSize(1).ofMaxSize(4);
    }

    private static void readAll(byte[] bytes) {
        ReadableByteChannel in = of(bytes);
        for (int n = 0; n <= bytes.length; n++) { // every message takes at least 4 bytes: this always ends
            try {
                ReturnPath m = ReturnPath.read(in);
                if (m instanceof ReturnPath.RequestPages r && r.block() != null) {
                    assertThat(r.block().length()).isBetween(1, 255);
                }
            } catch (IOException e) {
                return;
            }
        }
        throw new AssertionError("more messages than bytes");
    }
}
