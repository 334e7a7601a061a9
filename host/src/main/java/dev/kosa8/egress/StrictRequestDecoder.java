package dev.kosa8.egress;

import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpRequestDecoder;

/**
 * Netty's request decoder with bounds, refusing a request that carries both
 * Content-Length and Transfer-Encoding. Netty's default drops the length and
 * goes on, which is what RFC 9112 allows a server; a proxy in front of
 * servers that may disagree about framing must refuse instead, or a guest
 * could smuggle a second request past the policy.
 */
final class StrictRequestDecoder extends HttpRequestDecoder {
    static final int MAX_INITIAL_LINE = 8 * 1024;
    static final int MAX_HEADERS = 32 * 1024;
    static final int MAX_CHUNK = 64 * 1024;

    StrictRequestDecoder() {
        super(new HttpDecoderConfig().setMaxInitialLineLength(MAX_INITIAL_LINE).setMaxHeaderSize(MAX_HEADERS)
                .setMaxChunkSize(MAX_CHUNK).setStrictLineParsing(true).setAllowDuplicateContentLengths(false));
    }

    @Override
    protected void handleTransferEncodingChunkedWithContentLength(HttpMessage message) {
        throw new SmugglingRefused();
    }

    /** The refusal's text is the broker's own, so the audit log may keep it whole. */
    static final class SmugglingRefused extends IllegalArgumentException {
        SmugglingRefused() {
            super("both Content-Length and Transfer-Encoding: request smuggling refused");
        }
    }
}
