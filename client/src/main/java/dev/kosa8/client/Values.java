package dev.kosa8.client;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;

/** Reading the daemon's answers ({@link Json} values) into the SDK's records. */
final class Values {
    private Values() {
    }

    static Instant instant(Object value, String key) {
        String t = Json.text(value, key);
        try {
            return t.isEmpty() ? null : Instant.parse(t);
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    static List<String> strings(Object value, String key) {
        return Json.list(Json.get(value, key)).stream().map(String::valueOf).toList();
    }

    /** A field that is a number or null: null when absent or null. */
    static Integer integerOrNull(Object value, String key) {
        return Json.get(value, key) instanceof Number n ? n.intValue() : null;
    }
}
