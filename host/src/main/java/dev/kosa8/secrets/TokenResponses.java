package dev.kosa8.secrets;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * Takes the tokens out of a token endpoint's response (RFC 6749, 5.1: a JSON
 * object with {@code access_token}, {@code refresh_token} and, with OpenID
 * Connect, {@code id_token}), putting same-shaped placeholders
 * ({@link TokenPlaceholders}) in their place. The body is otherwise left
 * byte for byte as it came, so its length does not change.
 *
 * <p>Whatever cannot be read for certain is refused, never passed on: a body
 * over {@link #MAX_BODY}, a successful answer that is not a JSON object, a
 * token that is not a plain JSON string of printable ASCII, or one written
 * with JSON escapes (its raw bytes would not be found to replace), or a
 * field given twice.
 */
public final class TokenResponses {
    /** The largest token response the broker reads: real ones are a few KiB (an OpenAI id_token, ~2 KiB, the most). */
    public static final int MAX_BODY = 64 * 1024;
    /** The fields that carry tokens, in RFC 6749 and OpenID Connect. */
    public static final List<String> FIELDS = List.of("access_token", "refresh_token", "id_token");

    /** Strict about duplicate keys: of two {@code access_token}s the tree would keep one and the other pass unread. */
    static final ObjectMapper JSON = com.fasterxml.jackson.databind.json.JsonMapper.builder()
            .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

    private TokenResponses() {
    }

    /** One token taken out: the field it came in, the real value kept on the host and what the guest gets. */
    public record Token(String field, String real, String placeholder) {
        public Token {
            Objects.requireNonNull(field, "field");
            Objects.requireNonNull(real, "real");
            Objects.requireNonNull(placeholder, "placeholder");
        }

        /** Never the values. */
        @Override
        public String toString() {
            return "Token[" + field + "]";
        }
    }

    /** What becomes of a response. */
    public sealed interface Result {
    }

    /** The body to pass on, and the tokens taken out of it (none for an answer without tokens). */
    public record Rewritten(byte[] body, List<Token> tokens) implements Result {
        public Rewritten {
            tokens = List.copyOf(tokens);
        }
    }

    /** Not passed on at all, and why (for the audit log and the guest; never a value). */
    public record Refused(String why) implements Result {
    }

    /**
     * @param success the status was 2xx: an error answer that is not JSON (an HTML page) passes, a successful one is
     *                refused
     */
    public static Result rewrite(byte[] body, boolean success, RandomGenerator rng) {
        if (body.length > MAX_BODY) {
            return new Refused("the token response has " + body.length + " bytes, over the " + MAX_BODY
                    + " the broker reads");
        }
        String text = new String(body, StandardCharsets.UTF_8);
        JsonNode root;
        try {
            root = body.length == 0 ? null : JSON.readTree(body);
        } catch (java.io.IOException e) {
            root = null;
        }
        if (root == null || !root.isObject()) {
            if (!success && !mentionsToken(text)) {
                return new Rewritten(body, List.of());
            }
            return new Refused("the token response is not a JSON object");
        }
        Map<String, String> placeholderByReal = new LinkedHashMap<>();
        List<Token> tokens = new ArrayList<>();
        for (String field : FIELDS) {
            JsonNode v = root.get(field);
            if (v == null || v.isNull()) {
                continue;
            }
            if (!v.isTextual()) {
                return new Refused("its " + field + " is not a JSON string");
            }
            String real = v.asText();
            String problem = problem(real);
            if (problem != null) {
                return new Refused("its " + field + " " + problem);
            }
            if (!text.contains(real)) {
                return new Refused("its " + field + " is written with JSON escapes");
            }
            String placeholder;
            try {
                placeholder = placeholderByReal.computeIfAbsent(real, r -> TokenPlaceholders.mint(r, rng));
            } catch (IllegalArgumentException e) {
                return new Refused("its " + field + " has no shape a placeholder can take: " + e.getMessage());
            }
            tokens.add(new Token(field, real, placeholder));
        }
        if (tokens.isEmpty()) {
            return new Rewritten(body, List.of());
        }
        // longest first: a token that contains another is replaced whole
        List<String> reals = new ArrayList<>(placeholderByReal.keySet());
        reals.sort((a, b) -> b.length() - a.length());
        for (String real : reals) {
            text = text.replace(real, placeholderByReal.get(real));
        }
        byte[] out = text.getBytes(StandardCharsets.UTF_8);
        if (out.length != body.length) {
            return new Refused("the token response is not UTF-8"); // a malformed sequence was replaced in decoding
        }
        return new Rewritten(out, tokens);
    }

    /** Why a token cannot be kept as a secret value ({@link SecretStore}'s rule), or null. */
    static String problem(String token) {
        if (token.length() < SecretStore.MIN_LENGTH || token.length() > SecretStore.MAX_LENGTH) {
            return "has " + token.length() + " characters, not " + SecretStore.MIN_LENGTH + " to "
                    + SecretStore.MAX_LENGTH;
        }
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c < 0x21 || c > 0x7e) {
                return "has a character outside printable ASCII";
            }
        }
        return null;
    }

    private static boolean mentionsToken(String text) {
        for (String f : FIELDS) {
            if (text.contains(f)) {
                return true;
            }
        }
        return false;
    }
}
