package dev.kosa8.image.oci;

import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * Reads a tar stream (ustar, with GNU long names and PAX extended headers, as
 * {@code docker save}, registries and every layer writer produce) one member
 * at a time, within {@link ImportLimits}: a member's name, a PAX header and
 * the number of members are bounded, a header's checksum is checked, and a
 * stream that ends inside a header or a member's content is refused as
 * truncated. It never touches a file: what a member's name means is
 * {@link RootTree}'s to judge.
 */
public final class TarReader {
    private static final int BLOCK = 512;

    private final InputStream in;
    private final ImportLimits limits;
    private final String what;
    private long remaining;
    private long padding;
    private int entries;
    private boolean ended;

    /**
     * @param what how errors name the stream: {@code layer 2 (sha256:…)}
     */
    public TarReader(InputStream in, ImportLimits limits, String what) {
        this.in = in;
        this.limits = limits;
        this.what = what;
    }

    /** The next member, or null at the end of the archive. */
    public TarEntry next() throws IOException {
        skip(remaining + padding);
        remaining = 0;
        padding = 0;
        if (ended) {
            return null;
        }
        Map<String, byte[]> pax = new HashMap<>();
        String longName = null;
        String longLink = null;
        byte[] h = new byte[BLOCK];
        while (true) {
            if (!readBlock(h)) {
                ended = true;
                return null; // a stream that ends on a block boundary: some writers leave out the zero blocks
            }
            if (allZero(h)) {
                ended = true;
                return null;
            }
            checksum(h);
            if (++entries > limits.maxEntries()) {
                throw bad("more than " + limits.maxEntries() + " members");
            }
            char type = (char) h[156];
            long size = number(h, 124, 12, "size");
            switch (type) {
                case 'x' -> pax.putAll(PaxHeader.parse(readSmall(size, limits.maxPaxBytes(), "PAX header"), this::bad));
                case 'g' -> readSmall(size, limits.maxPaxBytes(), "global PAX header"); // defaults only: ignored
                case 'L' -> longName = cString(readSmall(size, limits.maxPathBytes() + 1, "GNU long name"));
                case 'K' -> longLink = cString(readSmall(size, limits.maxPathBytes() + 1, "GNU long link"));
                default -> {
                    return member(h, type, size, pax, longName, longLink);
                }
            }
        }
    }

    /** The current member's content: exactly its size in bytes, then end of stream. */
    public InputStream content() {
        return new InputStream() {
            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (remaining == 0) {
                    return -1;
                }
                int n = in.read(b, off, (int) Math.min(len, remaining));
                if (n < 0) {
                    throw bad("truncated: it ends inside a member's content");
                }
                remaining -= n;
                return n;
            }
        };
    }

    private TarEntry member(byte[] h, char type, long size, Map<String, byte[]> pax, String longName,
                            String longLink) throws IOException {
        String name = field(h, 0, 100);
        String magic = field(h, 257, 6);
        if (magic.startsWith("ustar")) {
            String prefix = field(h, 345, 155);
            if (!prefix.isEmpty() && magic.equals("ustar")) { // POSIX ustar; GNU's "ustar  " has no prefix
                name = prefix + "/" + name;
            }
        }
        if (longName != null) {
            name = longName;
        }
        String link = longLink != null ? longLink : field(h, 157, 100);
        name = pax.containsKey("path") ? PaxHeader.text(pax.get("path")) : name;
        link = pax.containsKey("linkpath") ? PaxHeader.text(pax.get("linkpath")) : link;
        if (pax.containsKey("size")) {
            size = paxNumber(pax.get("size"), "size");
        }
        long uid = pax.containsKey("uid") ? paxNumber(pax.get("uid"), "uid") : number(h, 108, 8, "uid");
        long gid = pax.containsKey("gid") ? paxNumber(pax.get("gid"), "gid") : number(h, 116, 8, "gid");
        int mode = (int) (number(h, 100, 8, "mode") & 07777);
        if (name.isEmpty()) {
            throw bad("a member has no name");
        }
        if (utf8Length(name) > limits.maxPathBytes() || utf8Length(link) > limits.maxPathBytes()) {
            throw bad("a member's name or link is longer than " + limits.maxPathBytes() + " bytes");
        }
        TarEntry.Type t = switch (type) {
            case '0', '\0', '7' -> name.endsWith("/") ? TarEntry.Type.DIRECTORY : TarEntry.Type.FILE;
            case '1' -> TarEntry.Type.HARDLINK;
            case '2' -> TarEntry.Type.SYMLINK;
            case '3' -> TarEntry.Type.CHAR_DEVICE;
            case '4' -> TarEntry.Type.BLOCK_DEVICE;
            case '5' -> TarEntry.Type.DIRECTORY;
            case '6' -> TarEntry.Type.FIFO;
            default -> throw bad("member " + name + " has type '" + printable(type)
                    + "', which an image layer may not hold (sparse and multi-volume members are not read)");
        };
        String member = PaxHeader.printable(name);
        Map<String, byte[]> xattrs = PaxHeader.xattrs(pax, limits, p -> bad("member " + member + ": " + p));
        int major = (int) number(h, 329, 8, "device major");
        int minor = (int) number(h, 337, 8, "device minor");
        long content = t == TarEntry.Type.FILE ? size : 0;
        // a hard link's or a directory's size field is taken as content to skip, as GNU tar does
        remaining = t == TarEntry.Type.FILE ? size : (t == TarEntry.Type.DIRECTORY || t == TarEntry.Type.HARDLINK
                || t == TarEntry.Type.SYMLINK ? size : 0);
        padding = pad(remaining);
        if (t != TarEntry.Type.FILE) {
            skip(remaining + padding);
            remaining = 0;
            padding = 0;
        }
        return new TarEntry(name, t, mode, uid, gid, content, link, major, minor, xattrs);
    }

    private static long pad(long size) {
        return (BLOCK - size % BLOCK) % BLOCK;
    }

    private byte[] readSmall(long size, int max, String kind) throws IOException {
        if (size > max) {
            throw bad("a " + kind + " of " + size + " bytes is over the limit of " + max);
        }
        byte[] b = new byte[(int) size];
        readFully(b);
        skip(pad(size));
        return b;
    }

    private long paxNumber(byte[] value, String field) throws IOException {
        String s = PaxHeader.text(value);
        try {
            long v = Long.parseLong(s.strip());
            if (v < 0) {
                throw bad("PAX " + field + " is negative");
            }
            return v;
        } catch (NumberFormatException e) {
            throw bad("PAX " + field + " is not a number: " + s);
        }
    }

    /** An octal field (NUL or space ended), or GNU's base-256 when the first byte's top bit is set. */
    private long number(byte[] h, int off, int len, String field) throws IOException {
        if ((h[off] & 0x80) != 0) {
            if ((h[off] & 0x40) != 0) {
                throw bad("the " + field + " field is negative");
            }
            long v = h[off] & 0x3f;
            for (int i = 1; i < len; i++) {
                if (v > (Long.MAX_VALUE >> 8)) {
                    throw bad("the " + field + " field is too large");
                }
                v = (v << 8) | (h[off + i] & 0xff);
            }
            return v;
        }
        long v = 0;
        int i = off;
        int end = off + len;
        while (i < end && (h[i] == ' ' || h[i] == 0)) {
            i++;
        }
        for (; i < end && h[i] != 0 && h[i] != ' '; i++) {
            if (h[i] < '0' || h[i] > '7') {
                throw bad("the " + field + " field is not an octal number");
            }
            if (v > (Long.MAX_VALUE >> 3)) {
                throw bad("the " + field + " field is too large");
            }
            v = (v << 3) + (h[i] - '0');
        }
        return v;
    }

    private void checksum(byte[] h) throws IOException {
        long stored = number(h, 148, 8, "checksum");
        long unsigned = 0;
        long signed = 0;
        for (int i = 0; i < BLOCK; i++) {
            int b = (i >= 148 && i < 156) ? ' ' : h[i];
            unsigned += b & 0xff;
            signed += (i >= 148 && i < 156) ? ' ' : h[i];
        }
        if (stored != unsigned && stored != signed) {
            throw bad("a header's checksum does not match (the archive is damaged, or not a tar archive)");
        }
    }

    private static String field(byte[] h, int off, int len) {
        int end = off;
        while (end < off + len && h[end] != 0) {
            end++;
        }
        return new String(h, off, end - off, StandardCharsets.UTF_8);
    }

    private static String cString(byte[] b) {
        int end = 0;
        while (end < b.length && b[end] != 0) {
            end++;
        }
        return new String(b, 0, end, StandardCharsets.UTF_8);
    }

    private static int utf8Length(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    private static String printable(char c) {
        return c >= 0x20 && c < 0x7f ? String.valueOf(c) : String.format("\\x%02x", (int) c);
    }

    private static boolean allZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    /** A whole block, or false at a clean end of stream; a partial block is truncation. */
    private boolean readBlock(byte[] b) throws IOException {
        int n = in.readNBytes(b, 0, BLOCK);
        if (n == 0) {
            return false;
        }
        if (n < BLOCK) {
            throw bad("truncated: it ends inside a header");
        }
        return true;
    }

    private void readFully(byte[] b) throws IOException {
        if (in.readNBytes(b, 0, b.length) < b.length) {
            throw bad("truncated: it ends inside a member");
        }
    }

    /** Reads past {@code n} bytes (read, not skipped: a digest over the stream must see them). */
    private void skip(long n) throws IOException {
        byte[] buf = new byte[(int) Math.min(n, 1 << 16)];
        while (n > 0) {
            int r = in.read(buf, 0, (int) Math.min(n, buf.length));
            if (r < 0) {
                throw bad("truncated: it ends inside a member's content");
            }
            n -= r;
        }
    }

    private KosaException bad(String problem) {
        return new KosaException(KosaException.Kind.IMAGE, what + ": " + problem,
                "check the archive: make it again with `docker save` or `skopeo copy`, or import another");
    }
}
