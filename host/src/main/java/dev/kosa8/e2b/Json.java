package dev.kosa8.e2b;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Reading the JSON bodies clients send, strictly by type: a field of the wrong type, a body that is not one JSON
 * object, are refused with a message naming the field, through {@code refuse} (a {@link ConnectError} for envd,
 * an {@link ApiError} for the control plane). Absent fields read as protobuf's JSON defaults.
 */
final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper();

    private final ObjectNode node;
    private final Function<String, RuntimeException> refuse;

    private Json(ObjectNode node, Function<String, RuntimeException> refuse) {
        this.node = node;
        this.refuse = refuse;
    }

    /** The body as one JSON object; an empty body is an empty object. */
    static Json parse(byte[] body, Function<String, RuntimeException> refuse) {
        if (body.length == 0) {
            return new Json(MAPPER.createObjectNode(), refuse);
        }
        JsonNode n;
        try {
            n = MAPPER.readTree(body);
        } catch (IOException e) {
            throw refuse.apply("the body is not JSON: " + firstLine(e.getMessage()));
        }
        if (n == null || n.isMissingNode() || n.isNull()) {
            return new Json(MAPPER.createObjectNode(), refuse);
        }
        if (!(n instanceof ObjectNode o)) {
            throw refuse.apply("the body must be a JSON object, not " + n.getNodeType().name().toLowerCase());
        }
        return new Json(o, refuse);
    }

    static Json forConnect(byte[] body) {
        return parse(body, ConnectError::invalid);
    }

    static Json forApi(byte[] body) {
        return parse(body, ApiError::badRequest);
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    boolean has(String field) {
        JsonNode v = node.get(field);
        return v != null && !v.isNull();
    }

    String string(String field, String dflt) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isTextual()) {
            throw refuse.apply("\"" + field + "\" must be a string");
        }
        return v.asText();
    }

    boolean bool(String field, boolean dflt) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw refuse.apply("\"" + field + "\" must be true or false");
        }
        return v.asBoolean();
    }

    /** A whole number in [min, max]; protobuf's JSON may write 64-bit ones as strings. */
    long number(String field, long dflt, long min, long max) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        long n;
        if (v.isIntegralNumber() && v.canConvertToLong()) {
            n = v.asLong();
        } else if (v.isTextual() && v.asText().matches("-?[0-9]{1,18}")) {
            n = Long.parseLong(v.asText());
        } else {
            throw refuse.apply("\"" + field + "\" must be a whole number");
        }
        if (n < min || n > max) {
            throw refuse.apply("\"" + field + "\" must be between " + min + " and " + max + ", not " + n);
        }
        return n;
    }

    List<String> strings(String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return List.of();
        }
        if (!v.isArray()) {
            throw refuse.apply("\"" + field + "\" must be an array of strings");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode e : v) {
            if (!e.isTextual()) {
                throw refuse.apply("\"" + field + "\" must be an array of strings");
            }
            out.add(e.asText());
        }
        return out;
    }

    Map<String, String> stringMap(String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return Map.of();
        }
        if (!v.isObject()) {
            throw refuse.apply("\"" + field + "\" must be an object of strings");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (var it = v.properties().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (!e.getValue().isTextual()) {
                throw refuse.apply("\"" + field + "." + e.getKey() + "\" must be a string");
            }
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }

    /** A nested object; absent reads as an empty one. */
    Json object(String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return new Json(MAPPER.createObjectNode(), refuse);
        }
        if (!(v instanceof ObjectNode o)) {
            throw refuse.apply("\"" + field + "\" must be an object");
        }
        return new Json(o, refuse);
    }

    /** Bytes, as protobuf's JSON writes them: standard or URL-safe base64. */
    byte[] bytes(String field) {
        String s = string(field, "");
        try {
            return java.util.Base64.getDecoder().decode(s);
        } catch (IllegalArgumentException e) {
            try {
                return java.util.Base64.getUrlDecoder().decode(s);
            } catch (IllegalArgumentException e2) {
                throw refuse.apply("\"" + field + "\" must be base64");
            }
        }
    }

    /** The raw value, for enums that come as a name or a number. */
    JsonNode raw(String field) {
        return node.get(field);
    }

    RuntimeException refuse(String message) {
        return refuse.apply(message);
    }

    static String quote(String s) {
        try {
            return MAPPER.writeValueAsString(s);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static byte[] write(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
