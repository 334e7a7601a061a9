package dev.kosa8.mcp;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** A tool's input schema (JSON Schema, as MCP's {@code inputSchema}), built one property at a time. */
final class Schema {
    private final Map<String, Object> properties = new LinkedHashMap<>();
    private final List<String> required = new ArrayList<>();

    static Schema object() {
        return new Schema();
    }

    Schema sandbox() {
        return string("sandbox", "The sandbox's id, as create_sandbox or list_sandboxes gave it.", true);
    }

    Schema process() {
        return string("process", "The process's id, as start_process gave it (like p3).", true);
    }

    Schema string(String name, String description, boolean isRequired) {
        return prop(name, Map.of("type", "string", "description", description), isRequired);
    }

    Schema string(String name, String description, int maxLength, boolean isRequired) {
        return prop(name, Map.of("type", "string", "description", description, "maxLength", maxLength),
                isRequired);
    }

    Schema choice(String name, String description, List<String> values) {
        return prop(name, Map.of("type", "string", "description", description, "enum", values), false);
    }

    Schema integer(String name, String description, long min, long max) {
        return prop(name, Map.of("type", "integer", "description", description, "minimum", min, "maximum", max),
                false);
    }

    Schema bool(String name, String description) {
        return prop(name, Map.of("type", "boolean", "description", description), false);
    }

    Schema strings(String name, String description, boolean isRequired) {
        return prop(name, Map.of("type", "array", "description", description, "items", Map.of("type", "string"),
                "maxItems", Args.MAX_ITEMS), isRequired);
    }

    Schema env(String name, String description) {
        return prop(name, Map.of("type", "object", "description", description,
                "additionalProperties", Map.of("type", "string")), false);
    }

    private Schema prop(String name, Map<String, Object> schema, boolean isRequired) {
        properties.put(name, schema);
        if (isRequired) {
            required.add(name);
        }
        return this;
    }

    Set<String> names() {
        return properties.keySet();
    }

    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "object");
        m.put("properties", properties);
        if (!required.isEmpty()) {
            m.put("required", required);
        }
        m.put("additionalProperties", false);
        return m;
    }
}
