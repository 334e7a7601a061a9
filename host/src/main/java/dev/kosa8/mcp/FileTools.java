package dev.kosa8.mcp;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * write_file and read_file (a whole file into or out of a sandbox, at most 4 MiB a call), and the daemon's file
 * operations (docs/api.md): list_files, stat_file, make_directory, remove_path, rename_path.
 */
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
                        this::read),
                new ToolDef("list_files", """
                        List a folder in a sandbox: each entry's path, type (file, directory, symlink, ...), size, \
                        mode, owner, group, modification time and link target, down to 'depth' levels (1: the \
                        folder's own entries), a folder before its contents; links are not followed. truncated \
                        says there were more than max_entries.""",
                        Schema.object().sandbox()
                                .string("path", "Absolute path of the folder.", Args.MAX_PATH, true)
                                .integer("depth", "Levels to descend (default 1, most 64).", 1, MAX_DEPTH)
                                .integer("max_entries", "At most this many entries (default 1,000, most 10,000).", 1,
                                        MAX_ENTRIES),
                        (a, c) -> backend.listFiles(a.sandbox(), a.guestPath("path"),
                                (int) a.number("depth", 1, MAX_DEPTH, 1),
                                (int) a.number("max_entries", 1, MAX_ENTRIES, 1000))),
                new ToolDef("stat_file", """
                        Describe one path in a sandbox: type, size, mode, owner, group, modification time and, \
                        for a link, its target. follow: true describes what a link points to. A missing path is \
                        an error saying so.""",
                        Schema.object().sandbox()
                                .string("path", "Absolute path in the sandbox.", Args.MAX_PATH, true)
                                .bool("follow", "Describe a link's target rather than the link (default false)."),
                        (a, c) -> backend.stat(a.sandbox(), a.guestPath("path"), a.flag("follow", false))),
                new ToolDef("make_directory", """
                        Make a folder in a sandbox with any missing parents (mode 755). A folder already there is \
                        an error unless exist_ok is true.""",
                        Schema.object().sandbox()
                                .string("path", "Absolute path of the folder to make.", Args.MAX_PATH, true)
                                .bool("exist_ok", "Succeed when it exists already (default false)."),
                        (a, c) -> backend.makeDirectory(a.sandbox(), a.guestPath("path"),
                                a.flag("exist_ok", false))),
                new ToolDef("remove_path", """
                        Remove a file, link or empty folder in a sandbox; recursive: true removes a folder and all \
                        in it (links inside are removed, never followed). / is refused.""",
                        Schema.object().sandbox()
                                .string("path", "Absolute path to remove.", Args.MAX_PATH, true)
                                .bool("recursive", "Remove a folder and everything in it (default false)."),
                        (a, c) -> backend.removeFile(a.sandbox(), a.guestPath("path"), a.flag("recursive", false))),
                new ToolDef("rename_path", """
                        Move or rename a file or folder in a sandbox. Something already at 'to' is an error \
                        unless replace is true.""",
                        Schema.object().sandbox()
                                .string("from", "Absolute path to move.", Args.MAX_PATH, true)
                                .string("to", "Absolute path to move it to.", Args.MAX_PATH, true)
                                .bool("replace", "Replace what is at 'to' (default false)."),
                        (a, c) -> backend.rename(a.sandbox(), a.guestPath("from"), a.guestPath("to"),
                                a.flag("replace", false))));
    }

    /** The daemon's bounds of a listing (docs/api.md). */
    static final int MAX_DEPTH = 64;
    static final int MAX_ENTRIES = 10_000;

    private Object write(Args a, Caller caller) {
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

    private Object read(Args a, Caller caller) {
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
