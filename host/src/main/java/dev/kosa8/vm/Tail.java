package dev.kosa8.vm;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/** The last lines of a log file, read from its end so a huge console log costs nothing. */
public final class Tail {
    private static final int MAX_BYTES = 64 * 1024;

    private Tail() {
    }

    public static String of(Path file, int lines) {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            long len = f.length();
            int n = (int) Math.min(len, MAX_BYTES);
            byte[] buf = new byte[n];
            f.seek(len - n);
            f.readFully(buf);
            List<String> all = new String(buf, StandardCharsets.UTF_8).replace("\r", "").lines().toList();
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(no log at " + file + ")";
        }
    }
}
