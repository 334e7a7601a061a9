package dev.kosa8.checkpoint;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;

/**
 * Names and paths as byte strings: one char per byte (ISO-8859-1), the form
 * {@link Posix} takes, so any Linux name round-trips, whatever the JVM's
 * locale. A manifest shows a path as text when its bytes are valid UTF-8 (by
 * far the common case, and readable) and as base64 when they are not; both
 * decode back to the same bytes.
 */
final class ByteNames {
    private ByteNames() {
    }

    /**
     * The bytes a host {@link Path} names (encoded as the JVM encodes file names, {@code sun.jnu.encoding}).
     * For the folder's and the store's own paths, which the host chose; names inside the folder never pass
     * through a {@code Path}.
     */
    static String fromHostPath(Path p) {
        Charset cs;
        try {
            cs = Charset.forName(System.getProperty("sun.jnu.encoding", "UTF-8"));
        } catch (RuntimeException e) {
            cs = StandardCharsets.UTF_8;
        }
        return new String(p.toString().getBytes(cs), StandardCharsets.ISO_8859_1);
    }

    /** The byte string of {@code text}'s UTF-8 encoding. */
    static String fromText(String text) {
        return new String(text.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
    }

    /** The text the bytes spell in UTF-8, or null if they are not valid UTF-8. */
    static String toTextOrNull(String bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.getBytes(StandardCharsets.ISO_8859_1))).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    static String toBase64(String bytes) {
        return Base64.getEncoder().encodeToString(bytes.getBytes(StandardCharsets.ISO_8859_1));
    }

    static String fromBase64(String base64) {
        return new String(Base64.getDecoder().decode(base64), StandardCharsets.ISO_8859_1);
    }

    /** For messages: the UTF-8 text, or the bytes with every non-ASCII one as {@code \xNN}. */
    static String display(String bytes) {
        String text = toTextOrNull(bytes);
        if (text != null) {
            return text;
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < bytes.length(); i++) {
            char c = bytes.charAt(i);
            if (c >= 0x20 && c < 0x7f) {
                b.append(c);
            } else {
                b.append(String.format("\\x%02x", (int) c));
            }
        }
        return b.toString();
    }

    /** {@code parent/name}, or {@code name} in the folder itself ("" is the folder). */
    static String join(String parent, String name) {
        return parent.isEmpty() ? name : parent + "/" + name;
    }

    /** The part after the last '/', or the whole path. */
    static String name(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }

    /** The part before the last '/', or "" for a name in the folder itself. */
    static String parent(String path) {
        int slash = path.lastIndexOf('/');
        return slash < 0 ? "" : path.substring(0, slash);
    }

    /**
     * True for "" (the folder) and for a relative path of names that are not empty, "." or "..", with no NUL
     * and only byte chars: nothing a manifest names can climb out of the folder.
     */
    static boolean isSafeRelativePath(String path) {
        if (path.isEmpty()) {
            return true;
        }
        for (String part : path.split("/", -1)) {
            if (part.isEmpty() || part.equals(".") || part.equals("..")) {
                return false;
            }
        }
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c == 0 || c > 0xff) {
                return false;
            }
        }
        return true;
    }
}
