package dev.kosa8.mcp;

/**
 * Who calls a tool: the client, by the name it gave itself at initialization (empty when it gave none), and the
 * MCP session it calls in, whose sandboxes are removed at its end. Over stdio there is one session a process; over
 * HTTP one per {@code Mcp-Session-Id}.
 */
record Caller(String client, McpSession session) {
}
