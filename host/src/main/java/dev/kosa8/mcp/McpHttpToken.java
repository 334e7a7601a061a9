package dev.kosa8.mcp;

import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Set;

/**
 * The bearer token every request to {@code kosa8 mcp --http} must carry: 256 random bits made at each start
 * (base64url, 43 characters), or the user's own from a file only they can read. {@link #matches} compares in
 * constant time: both sides are hashed first, so neither a token's content nor its length shows in the time taken.
 */
public final class McpHttpToken {
    /** The shortest token read from a file: 32 characters of token68, at least 192 bits of base64. */
    static final int MIN_LENGTH = 32;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final String value;
    private final byte[] digest;

    private McpHttpToken(String value) {
        this.value = value;
        this.digest = sha256(value);
    }

    /** A new token of 256 random bits. */
    public static McpHttpToken generate() {
        byte[] bits = new byte[32];
        RANDOM.nextBytes(bits);
        return new McpHttpToken(Base64.getUrlEncoder().withoutPadding().encodeToString(bits));
    }

    /** A token as given: refused unless it is token68 of at least {@link #MIN_LENGTH} characters. */
    static McpHttpToken of(String value, String source) {
        if (value.length() < MIN_LENGTH || value.length() > HttpGuard.MAX_HEADER / 2 || !HttpGuard.isToken68(value)) {
            throw new KosaException(KosaException.Kind.USAGE, source + " is not a usable token: it must be "
                    + MIN_LENGTH + " to " + HttpGuard.MAX_HEADER / 2 + " characters of letters, digits and -._~+/",
                    "write one with `head -c 32 /dev/urandom | base64 | tr -d '=\\n' > FILE && chmod 600 FILE`");
        }
        return new McpHttpToken(value);
    }

    /**
     * The token in {@code file} (its first line, spaces around it ignored). The file must be the user's and
     * readable by nobody else, as ssh asks of a key: a token others can read lets them drive the sandboxes.
     */
    public static McpHttpToken read(Path file) {
        try {
            Set<PosixFilePermission> mode = Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS);
            if (mode.stream().anyMatch(p -> p.name().startsWith("GROUP") || p.name().startsWith("OTHERS"))) {
                throw new KosaException(KosaException.Kind.USAGE, "token file " + file + " can be read or written by "
                        + "others (mode " + java.nio.file.attribute.PosixFilePermissions.toString(mode) + ")",
                        "chmod 600 " + file);
            }
            String text = Files.readString(file, StandardCharsets.UTF_8);
            String first = text.lines().findFirst().orElse("").strip();
            return of(first, "the first line of " + file);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot read token file " + file + ": " + e.getMessage(),
                    "give a file holding the token on its first line, readable only by you (chmod 600)");
        }
    }

    /** The token itself, to give to clients. */
    public String value() {
        return value;
    }

    /** Whether {@code presented} is this token; in time independent of either. */
    boolean matches(String presented) {
        return presented != null && MessageDigest.isEqual(digest, sha256(presented));
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java has SHA-256", e);
        }
    }

    @Override
    public String toString() {
        return "McpHttpToken[hidden]";
    }
}
