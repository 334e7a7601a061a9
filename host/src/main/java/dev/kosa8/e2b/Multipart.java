package dev.kosa8.e2b;

import java.io.IOException;
import java.io.InputStream;
import java.io.PushbackInputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A {@code multipart/form-data} body read as it arrives, one part at a time, each part's content a stream that
 * ends at the next boundary: an upload of any size is never held whole. Part headers are bounded
 * ({@link #MAX_HEADERS}); a body that breaks the format is an {@link ApiError} 400 saying where.
 */
final class Multipart {
    static final int MAX_HEADERS = 16 * 1024;
    /** The most one read of a part's content takes from the body at once. */
    private static final int CHUNK = 64 * 1024;

    private final PushbackInputStream in;
    private final byte[] delimiter; // CRLF--boundary
    private boolean done;
    private Part open;

    /** One part: its headers (names lower-cased) and its content. */
    record Part(Map<String, String> headers, InputStream content) {
        /** The {@code filename} of its Content-Disposition, or null. */
        String filename() {
            return dispositionParam("filename");
        }

        String name() {
            return dispositionParam("name");
        }

        private String dispositionParam(String key) {
            String d = headers.get("content-disposition");
            if (d == null) {
                return null;
            }
            for (String piece : d.split(";")) {
                String p = piece.strip();
                int eq = p.indexOf('=');
                if (eq > 0 && p.substring(0, eq).strip().equalsIgnoreCase(key)) {
                    String v = p.substring(eq + 1).strip();
                    if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
                        v = v.substring(1, v.length() - 1).replace("\\\"", "\"").replace("%22", "\"");
                    }
                    return v;
                }
            }
            return null;
        }
    }

    Multipart(InputStream body, String boundary) {
        if (boundary == null || boundary.isEmpty() || boundary.length() > 200) {
            throw ApiError.badRequest("multipart/form-data needs a boundary of 1 to 200 characters");
        }
        this.delimiter = ("\r\n--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
        this.in = new PushbackInputStream(body, CHUNK + 2 * delimiter.length + 2);
    }

    /** The boundary of a Content-Type header, or null. */
    static String boundary(String contentType) {
        for (String piece : contentType.split(";")) {
            String p = piece.strip();
            if (p.toLowerCase(Locale.ROOT).startsWith("boundary=")) {
                String b = p.substring("boundary=".length());
                if (b.length() >= 2 && b.startsWith("\"") && b.endsWith("\"")) {
                    b = b.substring(1, b.length() - 1);
                }
                return b;
            }
        }
        return null;
    }

    /** The next part, or null after the last; the one before must have been read to its end. */
    Part next() throws IOException {
        if (done) {
            return null;
        }
        if (open == null) {
            // the preamble ends at the first "--boundary"; the body starts there, without the leading CRLF
            in.unread(new byte[] {'\r', '\n'});
            skipToDelimiter();
        } else {
            byte[] rest = new byte[8192];
            while (open.content().read(rest) >= 0) {
                // drain what the caller left of the part before
            }
        }
        int a = in.read();
        int b = in.read();
        if (a == '-' && b == '-') {
            done = true;
            return null;
        }
        if (a != '\r' || b != '\n') {
            throw ApiError.badRequest("multipart body: a boundary is not followed by CRLF or --");
        }
        Map<String, String> headers = readHeaders();
        open = new Part(headers, new PartStream());
        return open;
    }

    private void skipToDelimiter() throws IOException {
        PartStream s = new PartStream();
        byte[] buf = new byte[8192];
        long skipped = 0;
        int n;
        while ((n = s.read(buf)) >= 0) {
            skipped += n;
            if (skipped > MAX_HEADERS) {
                throw ApiError.badRequest("multipart body: no boundary in its first " + MAX_HEADERS + " bytes");
            }
        }
    }

    private Map<String, String> readHeaders() throws IOException {
        Map<String, String> headers = new LinkedHashMap<>();
        StringBuilder line = new StringBuilder();
        int total = 0;
        while (true) {
            int c = in.read();
            if (c < 0) {
                throw ApiError.badRequest("multipart body ends inside a part's headers");
            }
            if (++total > MAX_HEADERS) {
                throw ApiError.badRequest("a multipart part's headers are longer than " + MAX_HEADERS + " bytes");
            }
            if (c == '\n') {
                int len = line.length();
                if (len > 0 && line.charAt(len - 1) == '\r') {
                    line.setLength(len - 1);
                }
                if (line.isEmpty()) {
                    return headers;
                }
                int colon = line.indexOf(":");
                if (colon <= 0) {
                    throw ApiError.badRequest("multipart body: a part header without a colon");
                }
                headers.put(line.substring(0, colon).strip().toLowerCase(Locale.ROOT),
                        line.substring(colon + 1).strip());
                line.setLength(0);
            } else {
                line.append((char) c);
            }
        }
    }

    /** A part's content: the bytes up to the next delimiter, which it consumes; read in bulk, searched in place. */
    private final class PartStream extends InputStream {
        private final byte[] look = new byte[CHUNK + delimiter.length];
        private boolean ended;

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (ended) {
                return -1;
            }
            if (len == 0) {
                return 0;
            }
            int want = Math.min(len, CHUNK) + delimiter.length;
            int got = 0;
            boolean eof = false;
            while (got < delimiter.length) {
                int n = in.read(look, got, want - got);
                if (n < 0) {
                    eof = true;
                    break;
                }
                got += n;
            }
            int at = indexOf(look, got);
            if (at >= 0) {
                System.arraycopy(look, 0, b, off, at);
                in.unread(look, at + delimiter.length, got - at - delimiter.length);
                ended = true;
                return at == 0 ? -1 : at;
            }
            if (eof) {
                throw ApiError.badRequest("multipart body ends inside a part, before its closing boundary");
            }
            // the last delimiter.length - 1 bytes may begin a delimiter: kept for the next read
            int safe = Math.min(len, got - (delimiter.length - 1));
            System.arraycopy(look, 0, b, off, safe);
            in.unread(look, safe, got - safe);
            return safe;
        }

        private int indexOf(byte[] buf, int length) {
            outer:
            for (int i = 0; i + delimiter.length <= length; i++) {
                if (buf[i] != delimiter[0]) {
                    continue;
                }
                for (int j = 1; j < delimiter.length; j++) {
                    if (buf[i + j] != delimiter[j]) {
                        continue outer;
                    }
                }
                return i;
            }
            return -1;
        }
    }
}
