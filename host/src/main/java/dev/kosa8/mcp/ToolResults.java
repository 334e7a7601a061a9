package dev.kosa8.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.KosaException;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns a tool's answer or failure into MCP's {@code CallToolResult}. An answer is its JSON as text (what an agent
 * reads) and as structured content (what a program reads). A failure is a result with {@code isError} set, so the
 * agent sees it and can correct the call (MCP's "tool execution error"), never a crash of the server: a
 * {@link ToolError} (a refused argument) or the daemon's {@link KosaException}, each with what happened and what
 * to do, and the kind of the failure; anything else is reported as an internal error and the server goes on.
 */
final class ToolResults {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ToolResults() {
    }

    static McpSchema.CallToolResult run(ToolDef tool, Map<String, Object> arguments, Caller caller) {
        Object answer;
        try {
            answer = tool.call().apply(tool.args(arguments), caller);
        } catch (ToolError e) {
            return error("USAGE", e.getMessage(), e.suggestion());
        } catch (KosaException e) {
            return error(e.kind().name(), e.getMessage(), e.suggestion());
        } catch (RuntimeException e) {
            return error("INTERNAL", tool.name() + " failed: " + e,
                    "please report it with kosa8's daemon log (`kosa8 doctor` shows where it is)");
        }
        return success(answer);
    }

    /** An answer; MCP's structured content is an object, so anything else is put under {@code result}. */
    static McpSchema.CallToolResult success(Object value) {
        Object answer = value instanceof Map<?, ?> ? value : Map.of("result", value == null ? Map.of() : value);
        return McpSchema.CallToolResult.builder().addTextContent(json(answer)).structuredContent(answer)
                .isError(false).build();
    }

    static McpSchema.CallToolResult error(String kind, String message, String suggestion) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", message);
        body.put("suggestion", suggestion == null ? "" : suggestion);
        body.put("kind", kind);
        String text = "error: " + message
                + (suggestion == null || suggestion.isEmpty() ? "" : "\nto do: " + suggestion);
        return McpSchema.CallToolResult.builder().content(List.of(new McpSchema.TextContent(text)))
                .structuredContent(body).isError(true).build();
    }

    static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            return String.valueOf(value);
        }
    }
}
