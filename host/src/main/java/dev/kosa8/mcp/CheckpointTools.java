package dev.kosa8.mcp;

import java.util.List;
import java.util.Map;

/** checkpoint, list_checkpoints, rewind, fork, diff. */
final class CheckpointTools {
    /** The most diff text answered; past it each change's text is left out (its summary stays). */
    static final int MAX_DIFF_TEXT = 1024 * 1024;

    private final McpBackend backend;

    CheckpointTools(McpBackend backend) {
        this.backend = backend;
    }

    List<ToolDef> tools() {
        return List.of(
                new ToolDef("checkpoint", """
                        Save a sandbox's whole state now (memory, disk, running processes and its shared folder) \
                        as a checkpoint, to rewind to or fork from later. The guest pauses for a moment. Answers \
                        the checkpoint's id. Take one before anything risky.""",
                        Schema.object().sandbox().string("message", "What this point is, for you later.", 512,
                                false),
                        (a, c) -> backend.checkpoint(a.sandbox(), a.optionalText("message", 512, ""))),
                new ToolDef("list_checkpoints", "List a sandbox's checkpoints, oldest first: id, message, time.",
                        Schema.object().sandbox(), (a, c) -> Map.of("checkpoints", backend.checkpoints(a.sandbox()))),
                new ToolDef("rewind", """
                        Put a sandbox back to a checkpoint, in place: memory, disk and the shared folder as they \
                        were then; everything since is gone, background processes started since end. Default: \
                        the latest checkpoint.""",
                        Schema.object().sandbox().string("checkpoint", "The checkpoint's id (default: the latest).",
                                64, false),
                        (a, c) -> backend.rewind(a.sandbox(), checkpointId(a, false))),
                new ToolDef("fork", """
                        Make a new sandbox running on from a checkpoint of another, with its own disk and its own \
                        copy of the folder; the original is untouched. Answers the new sandbox's id. Removed \
                        when this session ends unless keep is true.""",
                        Schema.object().sandbox().string("checkpoint", "The checkpoint to fork from.", 64, true)
                                .bool("keep", "Keep the fork after this MCP session ends (default false)."),
                        this::fork),
                new ToolDef("diff", """
                        What changed in a sandbox's shared folder since a checkpoint (default: since it started): \
                        each path added, deleted or modified, with a unified diff for text files.""",
                        Schema.object().sandbox().string("checkpoint", "Since this checkpoint (default: the start).",
                                64, false),
                        (a, c) -> trimmed(backend.diff(a.sandbox(), checkpointId(a, false)))));
    }

    static String checkpointId(Args a, boolean required) {
        String c = required ? a.text("checkpoint", 64) : a.optionalText("checkpoint", 64, "");
        if (!c.isEmpty() && !c.matches("[0-9A-Za-z._-]{1,64}")) {
            throw new ToolError("'" + c + "' is not a checkpoint id", "list_checkpoints lists them");
        }
        return c;
    }

    private Object fork(Args a, Caller caller) {
        String sandbox = a.sandbox();
        String checkpoint = checkpointId(a, true);
        boolean keep = a.flag("keep", false);
        Object made = backend.fork(sandbox, checkpoint, SandboxTools.createdBy(caller.client()));
        if (made instanceof Map<?, ?> m && m.get("id") instanceof String id) {
            caller.session().made(id, keep);
        }
        return made;
    }

    /** A diff whose texts together pass {@link #MAX_DIFF_TEXT} with the texts past it left out. */
    @SuppressWarnings("unchecked")
    static Object trimmed(Object diff) {
        if (!(diff instanceof Map<?, ?> d) || !(d.get("changes") instanceof List<?> changes)) {
            return diff;
        }
        long total = 0;
        for (Object c : changes) {
            if (c instanceof Map<?, ?> change && change.get("text") instanceof String t) {
                total += t.length();
                if (total > MAX_DIFF_TEXT) {
                    ((Map<String, Object>) change).put("text", null);
                    ((Map<String, Object>) change).put("textLeftOut", "past " + MAX_DIFF_TEXT
                            + " characters of diff in one answer; read the file with read_file");
                }
            }
        }
        return diff;
    }
}
