package dev.kosa8.mcp;

import java.util.Map;

/**
 * One tool: its name, the description an agent reads to decide when and how to call it, its input schema, and
 * what it does with checked arguments. {@code call} answers plain JSON values (maps, lists, strings, numbers).
 */
record ToolDef(String name, String description, Schema schema, Call call) {
    /** A tool's work on its arguments and who called it. */
    @FunctionalInterface
    interface Call {
        Object apply(Args args, Caller caller);
    }

    Args args(Map<String, Object> arguments) {
        return new Args(name, arguments, schema.names());
    }
}
