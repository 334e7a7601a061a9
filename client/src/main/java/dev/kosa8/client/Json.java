package dev.kosa8.client;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The daemon's answers as plain maps, lists, strings, numbers and booleans,
 * read with Jackson's streaming parser alone. The commands an agent calls
 * all day (the CLI's hot path) read their answers this way: a data-binding
 * {@code ObjectMapper} (and the modules it looks up) was the largest part of
 * their start-up after picocli's model. The Java SDK reads every answer
 * this way, so that it adds no data-binding library to its users' class path.
 */
public final class Json {
    private static final JsonFactory FACTORY = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(64).build()).build();

    private Json() {
    }

    /** The value {@code bytes} hold: a map, list, string, long, double, boolean or null. */
    public static Object parse(byte[] bytes) throws IOException {
        try (JsonParser p = FACTORY.createParser(bytes)) {
            JsonToken t = p.nextToken();
            if (t == null) {
                return Map.of();
            }
            Object v = value(p, t);
            if (p.nextToken() != null) {
                throw new IOException("more than one JSON value in the daemon's answer");
            }
            return v;
        }
    }

    private static Object value(JsonParser p, JsonToken t) throws IOException {
        return switch (t) {
            case START_OBJECT -> {
                Map<String, Object> m = new LinkedHashMap<>();
                for (JsonToken n = p.nextToken(); n != JsonToken.END_OBJECT; n = p.nextToken()) {
                    String key = p.currentName();
                    m.put(key, value(p, p.nextToken()));
                }
                yield m;
            }
            case START_ARRAY -> {
                List<Object> l = new ArrayList<>();
                for (JsonToken n = p.nextToken(); n != JsonToken.END_ARRAY; n = p.nextToken()) {
                    l.add(value(p, n));
                }
                yield l;
            }
            case VALUE_STRING -> p.getText();
            case VALUE_NUMBER_INT -> p.getLongValue();
            case VALUE_NUMBER_FLOAT -> p.getDoubleValue();
            case VALUE_TRUE -> true;
            case VALUE_FALSE -> false;
            case VALUE_NULL -> null;
            default -> throw new IOException("unexpected " + t + " in the daemon's answer");
        };
    }

    /** {@code value}'s field {@code key} as text ("" when it is not an object or has no such field). */
    public static String text(Object value, String key) {
        Object v = value instanceof Map<?, ?> m ? m.get(key) : null;
        return v == null ? "" : String.valueOf(v);
    }

    /** {@code value}'s field {@code key} as a number (0 when missing or not a number). */
    public static long number(Object value, String key) {
        Object v = value instanceof Map<?, ?> m ? m.get(key) : null;
        return v instanceof Number n ? n.longValue() : 0;
    }

    /** {@code value}'s field {@code key} as a boolean (false when missing). */
    public static boolean flag(Object value, String key) {
        return value instanceof Map<?, ?> m && Boolean.TRUE.equals(m.get(key));
    }

    /** {@code value}'s field {@code key} (null when it is not an object or has no such field). */
    public static Object get(Object value, String key) {
        return value instanceof Map<?, ?> m ? m.get(key) : null;
    }

    /** {@code value} as a list (empty when it is not one). */
    public static List<?> list(Object value) {
        return value instanceof List<?> l ? l : List.of();
    }
}
