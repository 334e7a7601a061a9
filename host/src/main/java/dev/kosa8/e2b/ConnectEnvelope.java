package dev.kosa8.e2b;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Connect's framing of a stream's messages (https://connectrpc.com/docs/protocol#streaming-rpcs): one flag byte
 * (0x01 compressed, 0x02 the end of the stream), a 4-byte big-endian length, the message. A server-streaming
 * request carries exactly one uncompressed message; every decoding refusal is a {@link ConnectError} saying what
 * was wrong, so a client that sends a truncated, oversized or extra frame is told, and nothing is run.
 */
final class ConnectEnvelope {
    static final int HEADER = 5;
    static final int COMPRESSED = 0x01;
    static final int END_STREAM = 0x02;

    /** One frame: its flags and its message. */
    record Frame(int flags, byte[] message) {
    }

    private ConnectEnvelope() {
    }

    /**
     * Every frame in {@code body}, each message at most {@code maxMessage} bytes.
     *
     * @throws ConnectError invalid_argument for a truncated frame, resource_exhausted for one over the bound
     */
    static List<Frame> decodeAll(byte[] body, int maxMessage) {
        List<Frame> frames = new ArrayList<>();
        int at = 0;
        while (at < body.length) {
            if (body.length - at < HEADER) {
                throw ConnectError.invalid("a Connect envelope is truncated: " + (body.length - at)
                        + " bytes where its 5-byte header should be");
            }
            int flags = body[at] & 0xff;
            long length = ((body[at + 1] & 0xffL) << 24) | ((body[at + 2] & 0xff) << 16)
                    | ((body[at + 3] & 0xff) << 8) | (body[at + 4] & 0xff);
            if (length > maxMessage) {
                throw new ConnectError(ConnectError.Code.RESOURCE_EXHAUSTED, "a Connect message of " + length
                        + " bytes is more than this listener takes (" + maxMessage + ")");
            }
            if (length > body.length - at - HEADER) {
                throw ConnectError.invalid("a Connect envelope is truncated: it announces " + length
                        + " bytes and " + (body.length - at - HEADER) + " follow");
            }
            byte[] message = new byte[(int) length];
            System.arraycopy(body, at + HEADER, message, 0, (int) length);
            frames.add(new Frame(flags, message));
            at += HEADER + (int) length;
        }
        return frames;
    }

    /** The one message of a server-streaming request. */
    static byte[] single(byte[] body, int maxMessage) {
        List<Frame> frames = decodeAll(body, maxMessage);
        if (frames.size() != 1) {
            throw ConnectError.invalid("a server-streaming request carries exactly one message; this one has "
                    + frames.size());
        }
        Frame f = frames.getFirst();
        if ((f.flags() & COMPRESSED) != 0) {
            throw ConnectError.invalid("compressed Connect messages are not accepted: send them uncompressed");
        }
        if (f.flags() != 0) {
            throw ConnectError.invalid("a request message has unknown flags 0x" + Integer.toHexString(f.flags()));
        }
        return f.message();
    }

    static byte[] frame(int flags, byte[] message) {
        byte[] out = new byte[HEADER + message.length];
        out[0] = (byte) flags;
        out[1] = (byte) (message.length >>> 24);
        out[2] = (byte) (message.length >>> 16);
        out[3] = (byte) (message.length >>> 8);
        out[4] = (byte) message.length;
        System.arraycopy(message, 0, out, HEADER, message.length);
        return out;
    }

    /** The end of a stream: {@code {}}, or {@code {"error": {"code", "message"}}}. */
    static byte[] end(ConnectError error) {
        String json = error == null ? "{}" : "{\"error\":" + errorJson(error) + "}";
        return frame(END_STREAM, json.getBytes(StandardCharsets.UTF_8));
    }

    /** The error as Connect's JSON: {@code {"code": "not_found", "message": "..."}}. */
    static String errorJson(ConnectError error) {
        return "{\"code\":\"" + error.code().wire() + "\",\"message\":" + Json.quote(error.getMessage()) + "}";
    }
}
