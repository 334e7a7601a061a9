package dev.kosa8.image.oci;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.zip.GZIPOutputStream;

/** Writes small ustar archives for the tests, members of every type, with PAX headers where asked. */
public final class TestTar {
    public TestTar() {
    }

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    public TestTar file(String name, String content) {
        return file(name, 0644, 0, 0, content.getBytes(StandardCharsets.UTF_8));
    }

    public TestTar file(String name, int mode, long uid, long gid, byte[] content) {
        header(name, '0', mode, uid, gid, content.length, "", 0, 0);
        data(content);
        return this;
    }

    public TestTar dir(String name) {
        return dir(name, 0755, 0, 0);
    }

    public TestTar dir(String name, int mode, long uid, long gid) {
        header(name, '5', mode, uid, gid, 0, "", 0, 0);
        return this;
    }

    public TestTar symlink(String name, String target) {
        header(name, '2', 0777, 0, 0, 0, target, 0, 0);
        return this;
    }

    public TestTar hardlink(String name, String target) {
        header(name, '1', 0644, 0, 0, 0, target, 0, 0);
        return this;
    }

    public TestTar device(String name, char type, int major, int minor) {
        header(name, type, 0666, 0, 0, 0, "", major, minor);
        return this;
    }

    /** A PAX header setting {@code key=value} for the next member. */
    public TestTar pax(String key, String value) {
        return pax(key, value.getBytes(StandardCharsets.UTF_8));
    }

    /** A PAX header of one record whose value is any bytes (an extended attribute's, raw as GNU tar writes it). */
    public TestTar pax(String key, byte[] value) {
        byte[] b = paxRecord(key, value);
        header("PaxHeader", 'x', 0644, 0, 0, b.length, "", 0, 0);
        data(b);
        return this;
    }

    /** One PAX record, {@code "LEN key=value\n"}, LEN counting the whole record in bytes. */
    public static byte[] paxRecord(String key, byte[] value) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        int len = 1 + k.length + 1 + value.length + 1;
        int total = len + Integer.toString(len).length();
        if (Integer.toString(total).length() != Integer.toString(len).length()) {
            total++;
        }
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes((total + " " + key + "=").getBytes(StandardCharsets.UTF_8));
        b.writeBytes(value);
        b.write('\n');
        return b.toByteArray();
    }

    /** A raw header with any type and size (its content not written). */
    public TestTar header(String name, char type, int mode, long uid, long gid, long size, String link, int major,
                   int minor) {
        byte[] h = new byte[512];
        put(h, 0, 100, name);
        octal(h, 100, 8, mode);
        octal(h, 108, 8, uid);
        octal(h, 116, 8, gid);
        octal(h, 124, 12, size);
        octal(h, 136, 12, 0);
        h[156] = (byte) type;
        put(h, 157, 100, link);
        put(h, 257, 6, "ustar");
        h[263] = '0';
        h[264] = '0';
        octal(h, 329, 8, major);
        octal(h, 337, 8, minor);
        for (int i = 148; i < 156; i++) {
            h[i] = ' ';
        }
        long sum = 0;
        for (byte x : h) {
            sum += x & 0xff;
        }
        String c = String.format("%06o", sum);
        put(h, 148, 7, c);
        h[154] = 0;
        h[155] = ' ';
        out.writeBytes(h);
        return this;
    }

    public TestTar data(byte[] b) {
        out.writeBytes(b);
        int pad = (512 - b.length % 512) % 512;
        out.writeBytes(new byte[pad]);
        return this;
    }

    public byte[] bytes() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(out.toByteArray());
        b.writeBytes(new byte[1024]);
        return b.toByteArray();
    }

    public byte[] gzip() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try (GZIPOutputStream g = new GZIPOutputStream(b)) {
            g.write(bytes());
        }
        return b.toByteArray();
    }

    private static void put(byte[] h, int off, int len, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(b, 0, h, off, Math.min(len, b.length));
    }

    private static void octal(byte[] h, int off, int len, long v) {
        String s = String.format("%0" + (len - 1) + "o", v);
        put(h, off, len - 1, s);
    }
}
