package dev.kosa8.client;

import java.util.Base64;
import java.util.List;

/**
 * One read of a background process's output: the chunks from byte {@code from} up to {@code next}.
 * Read again from {@code next} to get each byte exactly once.
 *
 * @param end      every byte it has written so far
 * @param dropped  bytes between {@code from} and the first the daemon still keeps (its buffer is bounded)
 * @param complete true once it has ended and {@code next} is its last byte
 */
public record ProcessOutput(long from, long next, long end, long dropped, boolean complete, List<Chunk> chunks,
                            ProcessInfo process) {

    /** Bytes of one stream, at {@code offset} in the process's output (stdout and stderr counted together). */
    public record Chunk(boolean stderr, long offset, byte[] bytes) {
    }

    static ProcessOutput of(Object v) {
        List<Chunk> chunks = Json.list(Json.get(v, "chunks")).stream()
                .map(c -> new Chunk(Json.text(c, "stream").equals("stderr"), Json.number(c, "offset"),
                        Base64.getDecoder().decode(Json.text(c, "data"))))
                .toList();
        return new ProcessOutput(Json.number(v, "from"), Json.number(v, "next"), Json.number(v, "end"),
                Json.number(v, "dropped"), Json.flag(v, "complete"), chunks, ProcessInfo.of(Json.get(v, "process")));
    }
}
