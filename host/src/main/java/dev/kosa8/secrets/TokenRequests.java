package dev.kosa8.secrets;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Puts the real tokens back into a request to a token endpoint: a refresh
 * ({@code grant_type=refresh_token}) carries the refresh placeholder, an
 * OpenAI token exchange the id_token's. The body is the guest's: every byte
 * of it is hostile input, read within {@link #MAX_BODY}.
 *
 * <p>A placeholder is replaced where it is a whole value: a top-level string
 * of a JSON object ({@code application/json}), or a whole value of a form
 * ({@code application/x-www-form-urlencoded}, percent-decoded once). Nowhere
 * else: a placeholder inside other text stays a placeholder, worth nothing
 * upstream. A body of another type is passed as it is. A JSON or form body
 * that cannot be read is refused, and so is one over the limit.
 */
public final class TokenRequests {
    /** The largest request body to a token endpoint the broker reads: real ones are under 4 KiB. */
    public static final int MAX_BODY = 64 * 1024;

    private TokenRequests() {
    }

    public sealed interface Result {
    }

    /**
     * The body to send, and the fields whose placeholder became the real token (for the audit log; none: the body is
     * the guest's own bytes).
     */
    public record Swapped(byte[] body, List<String> fields) implements Result {
        public Swapped {
            fields = List.copyOf(fields);
        }
    }

    public record Refused(String why) implements Result {
    }

    /**
     * @param contentType the request's Content-Type, or null
     * @param realByPlaceholder each placeholder the guest may send here and the token it stands for
     */
    public static Result swap(byte[] body, String contentType, Map<String, String> realByPlaceholder) {
        if (body.length > MAX_BODY) {
            return new Refused("the request to the token endpoint has a body of " + body.length + " bytes, over the "
                    + MAX_BODY + " the broker reads");
        }
        if (body.length == 0 || realByPlaceholder.isEmpty()) {
            return new Swapped(body, List.of());
        }
        String type = contentType == null ? "" : contentType.split(";", 2)[0].strip().toLowerCase(Locale.ROOT);
        if (type.equals("application/json") || type.endsWith("+json")) {
            return json(body, realByPlaceholder);
        }
        if (type.equals("application/x-www-form-urlencoded")) {
            return form(body, realByPlaceholder);
        }
        return new Swapped(body, List.of());
    }

    private static Result json(byte[] body, Map<String, String> realByPlaceholder) {
        JsonNode root;
        try {
            root = TokenResponses.JSON.readTree(body);
        } catch (JacksonException e) {
            return new Refused("the request to the token endpoint says JSON but is not: " + e.getOriginalMessage());
        } catch (java.io.IOException e) {
            return new Refused("the request to the token endpoint says JSON but is not: " + e.getMessage());
        }
        if (root == null || !root.isObject()) {
            return new Refused("the request to the token endpoint says JSON but is not an object");
        }
        ObjectNode object = (ObjectNode) root;
        List<String> fields = new ArrayList<>();
        for (Map.Entry<String, JsonNode> e : object.properties()) {
            String real = e.getValue().isTextual() ? realByPlaceholder.get(e.getValue().asText()) : null;
            if (real != null) {
                fields.add(e.getKey());
            }
        }
        if (fields.isEmpty()) {
            return new Swapped(body, List.of());
        }
        for (String f : fields) {
            object.put(f, realByPlaceholder.get(object.get(f).asText()));
        }
        try {
            return new Swapped(TokenResponses.JSON.writeValueAsBytes(object), fields);
        } catch (JacksonException e) {
            return new Refused("the request to the token endpoint could not be written again: " + e.getMessage());
        }
    }

    private static Result form(byte[] body, Map<String, String> realByPlaceholder) {
        String text = new String(body, StandardCharsets.ISO_8859_1); // bytes as they are; only ASCII is decoded
        String[] pairs = text.split("&", -1);
        List<String> fields = new ArrayList<>();
        StringBuilder out = new StringBuilder(text.length() + 256);
        for (int i = 0; i < pairs.length; i++) {
            String pair = pairs[i];
            int eq = pair.indexOf('=');
            if (eq >= 0) {
                String name = pair.substring(0, eq);
                String value;
                String decodedName;
                try {
                    value = URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                    decodedName = URLDecoder.decode(name, StandardCharsets.UTF_8);
                } catch (IllegalArgumentException e) {
                    return new Refused("the request to the token endpoint is a form with a broken %-escape");
                }
                String real = realByPlaceholder.get(value);
                if (real != null) {
                    fields.add(decodedName);
                    pair = name + "=" + URLEncoder.encode(real, StandardCharsets.UTF_8);
                }
            }
            out.append(i == 0 ? "" : "&").append(pair);
        }
        if (fields.isEmpty()) {
            return new Swapped(body, List.of());
        }
        return new Swapped(out.toString().getBytes(StandardCharsets.ISO_8859_1), fields);
    }
}
