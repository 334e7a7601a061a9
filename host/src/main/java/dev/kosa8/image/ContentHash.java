package dev.kosa8.image;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * A SHA-256 over labelled inputs, each length-prefixed so no two different
 * input lists hash alike. A part of the image lives in a directory named by
 * the hash of its inputs: same inputs, same directory, nothing to rebuild.
 */
final class ContentHash {
    private final MessageDigest sha;

    private ContentHash(String kind) {
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
        add("kind", kind);
    }

    static ContentHash of(String kind) {
        return new ContentHash(kind);
    }

    ContentHash add(String label, String value) {
        return add(label, value.getBytes(StandardCharsets.UTF_8));
    }

    ContentHash add(String label, List<String> values) {
        return add(label, String.join("\n", values));
    }

    ContentHash add(String label, byte[] bytes) {
        field(label.getBytes(StandardCharsets.UTF_8));
        field(bytes);
        return this;
    }

    private void field(byte[] bytes) {
        sha.update(ByteBuffer.allocate(Long.BYTES).putLong(bytes.length).array());
        sha.update(bytes);
    }

    /** The full hash in lower-case hex (64 characters). Ends this hash. */
    String hex() {
        return HexFormat.of().formatHex(sha.digest());
    }
}
