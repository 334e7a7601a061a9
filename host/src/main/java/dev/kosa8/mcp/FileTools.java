package dev.kosa8.mcp;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** write_file and read_file: a whole file into or out of a sandbox, at most 4 MiB a call. */
final class FileTools {
    private final McpBackend backend;

    FileTools(McpBackend backend) {
        this.backend = backend;
    }

    List<ToolDef> tools() {
        return List.of(
                new ToolDef("write_file", """
                        Write a file in a sandbox, replacing it if it exists; parent folders must exist (make \
                        them with run_command mkdir -p). Content is text, or base64 with encoding: base64; at \
                        most 4 MiB. The file appears whole or not at all. Paths are absolute (/root/x.py, or \
                        /workspace/... for the shared folder), without . or .. segments.""",
                        Schema.object().sandbox()
                                .string("path", "Absolute path in the sandbox.", Args.MAX_PATH, true)
                                .string("content", "The file's content.", true)
                                .choice("encoding", "utf-8 (default) or base64.", List.of("utf-8", "base64"))
                                .string("mode", "Permissions in octal, like 644 (default) or 755.", 4, false),
                        this::write),
                new ToolDef("read_file", """
                        Read a file from a sandbox: answers content (as text, or base64 with encoding: base64), \
                        size (the whole file's) and truncated (true when the file is larger than max_bytes, \
                        default and most 4 MiB). Paths are absolute, without . or .. segments.""",
                        Schema.object().sandbox()
                                .string("path", "Absolute path in the sandbox.", Args.MAX_PATH, true)
                                .choice("encoding", "utf-8 (default) or base64 (for binary files).",
                                        List.of("utf-8", "base64"))
                                .integer("max_bytes", "Read at most this many bytes (default and most 4 MiB).", 1,
                                        Args.MAX_CONTENT),
                        this::read));
    }

    private Object write(Args a, String client) {
        String sandbox = a.sandbox();
        String path = a.guestPath("path");
        byte[] content = a.content("content", true);
        String mode = a.optionalText("mode", 4, "644");
        if (!mode.matches("[0-7]{3,4}")) {
            throw new ToolError("write_file: 'mode' must be octal permissions like 644 or 755, not '" + mode + "'",
                    "");
        }
        backend.writeFile(sandbox, path, content, Integer.parseInt(mode, 8));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("path", path);
        out.put("bytes", content.length);
        return out;
    }

    private Object read(Args a, String client) {
        String sandbox = a.sandbox();
        String path = a.guestPath("path");
        String encoding = a.encoding();
        int max = (int) a.number("max_bytes", 1, Args.MAX_CONTENT, Args.MAX_CONTENT);
        McpBackend.FileContent f = backend.readFile(sandbox, path, max);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("path", path);
        out.put("content", encoding.equals("base64") ? Base64.getEncoder().encodeToString(f.bytes())
                : new String(f.bytes(), StandardCharsets.UTF_8));
        out.put("encoding", encoding);
        out.put("size", f.size());
        out.put("mode", Integer.toOctalString(f.mode()));
        out.put("truncated", f.truncated());
        return out;
    }
}
