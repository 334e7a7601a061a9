package dev.kosa8.e2b;

import java.io.IOException;
import java.util.Locale;

/**
 * One Connect RPC over HTTP/1.1 with the JSON codec: a unary call (a JSON body, a JSON answer) or a
 * server-streaming one (one enveloped request message, enveloped answers ending in an end-of-stream message).
 */
final class ConnectCall {
    /** The largest request message taken: stdin sent in one call is the largest the SDK sends. */
    static final int MAX_MESSAGE = 4 << 20;

    final Exchange x;
    final boolean streaming;
    private boolean streamStarted;

    ConnectCall(Exchange x) {
        this.x = x;
        String type = x.headers.get("Content-Type", "").toLowerCase(Locale.ROOT);
        int semi = type.indexOf(';');
        type = (semi < 0 ? type : type.substring(0, semi)).strip();
        this.streaming = type.equals("application/connect+json");
        if (!streaming && !type.equals("application/json")) {
            throw new ConnectError(ConnectError.Code.INVALID_ARGUMENT, "kosa8's envd speaks Connect with the JSON"
                    + " codec: Content-Type application/json or application/connect+json, not " + Json.quote(type));
        }
    }

    /** The request message, as JSON. */
    Json request() throws IOException {
        byte[] body = x.body.readAll(MAX_MESSAGE + ConnectEnvelope.HEADER);
        if (body == null) {
            throw new ConnectError(ConnectError.Code.RESOURCE_EXHAUSTED, "a request of more than " + MAX_MESSAGE
                    + " bytes: send less at once");
        }
        return Json.forConnect(streaming ? ConnectEnvelope.single(body, MAX_MESSAGE) : body);
    }

    /** A unary call's answer. */
    void reply(Object message) {
        x.json(200, message);
    }

    /** One message of a stream's answer. */
    void send(Object message) {
        if (!streamStarted) {
            streamStarted = true;
            x.start(200, "application/connect+json", -1, null);
        }
        x.write(ConnectEnvelope.frame(0, Json.write(message)));
    }

    /** Ends the stream: cleanly, or with an error. */
    void end(ConnectError error) {
        if (!streamStarted) {
            streamStarted = true;
            x.start(200, "application/connect+json", -1, null);
        }
        x.write(ConnectEnvelope.end(error));
        x.end();
    }

    /** Answers an error however far the call got. */
    void fail(ConnectError e) {
        if (streaming) {
            if (x.started() && !streamStarted) {
                x.abort();
                return;
            }
            end(e);
        } else if (!x.started()) {
            x.bytes(e.code().httpStatus, "application/json", Exchange.utf8(ConnectEnvelope.errorJson(e)));
        } else {
            x.abort();
        }
    }
}
