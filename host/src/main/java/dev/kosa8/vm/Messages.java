package dev.kosa8.vm;

import dev.kosa8.protocol.Limits;
import java.nio.charset.StandardCharsets;

/** Helpers for building messages from text the host does not control. */
public final class Messages {
    private Messages() {
    }

    /**
     * Cuts text to fit a message's text field ({@link Limits#MAX_SHORT_TEXT}
     * bytes of UTF-8), on a character boundary. Reasons and errors can quote
     * what a guest sent, so they are cut before they go into a message.
     */
    public static String fitText(String s) {
        int max = Limits.MAX_SHORT_TEXT - 16;
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length <= max) {
            return s;
        }
        int end = max;
        while (end > 0 && (b[end] & 0xC0) == 0x80) {
            end--;
        }
        return new String(b, 0, end, StandardCharsets.UTF_8) + "…";
    }
}
