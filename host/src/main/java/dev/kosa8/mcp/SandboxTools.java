package dev.kosa8.mcp;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** create_sandbox, list_sandboxes, remove_sandbox. */
final class SandboxTools {
    private final McpBackend backend;
    private final McpPolicy policy;

    SandboxTools(McpBackend backend, McpPolicy policy) {
        this.backend = backend;
        this.policy = policy;
    }

    List<ToolDef> tools() {
        return List.of(
                new ToolDef("create_sandbox", """
                        Create and boot a new sandbox: a microVM with its own Linux kernel, no network but the hosts \
                        allowed, and none of this machine's files but the one folder shared. Answers its id, which \
                        every other tool takes. Takes tens of seconds. The sandbox is removed when this MCP session \
                        ends unless keep is true. Run commands in it with run_command.""",
                        Schema.object()
                                .string("image", "Image to boot (default kosa8/debian: Debian with python3, git, curl)."
                                        , 256, false)
                                .string("memory", "Guest memory, like 512M or 2G (default 1G or the project's).", 16,
                                        false)
                                .integer("cpus", "Virtual CPUs (default 2 or the project's).", 1, 64)
                                .string("workspace", "Absolute host folder the sandbox sees live at /workspace "
                                        + "(default: the folder the MCP server runs in, none when that is / or the "
                                        + "user's home); 'none' for no folder.",
                                        Args.MAX_PATH, false)
                                .choice("net", "closed: only allowed hosts (default); none: no network device; "
                                        + "open: every host.", List.of("closed", "none", "open"))
                                .strings("allow", "Hosts it may reach: pypi.org, *.example.com, name:port, or a "
                                        + "preset (@pypi, @npm, @github). Beyond the user's configuration only "
                                        + "when the server allows policy changes.", false)
                                .strings("secrets", "Names of secrets from `kosa8 secret set` to give it (values "
                                        + "never shown: commands see a placeholder that the network broker "
                                        + "replaces on the way to the secret's host).", false)
                                .bool("keep", "Keep the sandbox after this MCP session ends (default false)."),
                        this::create),
                new ToolDef("list_sandboxes", """
                        List the sandboxes on this machine: id, state, who made them (mcp:CLIENT for an MCP \
                        session's), image, memory, cpus, workspace folder and published ports.""",
                        Schema.object(), (a, c) -> Map.of("sandboxes", backend.list())),
                new ToolDef("remove_sandbox", """
                        Remove a sandbox this MCP session created or forked: its VM is stopped and its disk, \
                        checkpoints and processes are deleted. Held changes to the shared folder are kept for the \
                        user to review. Sandboxes the user made are not removed here.""",
                        Schema.object().sandbox(), this::remove));
    }

    private Object create(Args a, Caller caller) {
        String net = a.has("net") ? a.optionalText("net", 16, null) : null;
        if (net != null && !List.of("closed", "none", "open").contains(net)) {
            throw new ToolError("create_sandbox: 'net' must be closed, none or open, not '" + net + "'", "");
        }
        List<String> allow = a.texts("allow");
        List<String> secrets = a.texts("secrets");
        policy.checkNet(net);
        policy.checkAllow(allow);
        policy.checkSecrets(secrets);
        String workspace = a.optionalText("workspace", Args.MAX_PATH, "");
        if (!workspace.isEmpty() && !workspace.equals("none") && !workspace.startsWith("/")) {
            throw new ToolError("create_sandbox: 'workspace' must be an absolute host folder or 'none', not '"
                    + workspace + "'", "");
        }
        String memory = a.optionalText("memory", 16, null);
        if (memory != null && !memory.matches("[0-9]{1,7}[KkMmGg]?")) {
            throw new ToolError("create_sandbox: 'memory' must be a size like 512M or 2G, not '" + memory + "'", "");
        }
        Integer cpus = a.has("cpus") ? (int) a.number("cpus", 1, 64, 2) : null;
        boolean keep = a.flag("keep", false);
        Object made = backend.create(new McpBackend.CreateSpec(a.optionalText("image", 256, null), memory, cpus,
                workspace, net, allow, secrets, createdBy(caller.client())));
        String id = made instanceof Map<?, ?> m && m.get("id") instanceof String s ? s : "";
        if (!id.isEmpty()) {
            caller.session().made(id, keep);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", id);
        out.put("keep", keep);
        out.put("sandbox", made);
        return out;
    }

    private Object remove(Args a, Caller caller) {
        String given = a.sandbox();
        String id = caller.session().madeHere(given);
        if (id == null) {
            throw new ToolError("sandbox " + given + " was not made by this MCP session, so it is not removed here",
                    "the user removes it with `kosa8 rm -f " + given + "`");
        }
        Object answer = backend.remove(id);
        caller.session().forget(id);
        return answer;
    }

    /** {@code mcp:CLIENT}, the client's name as it named itself, cut to a short label of safe characters. */
    static String createdBy(String client) {
        String name = client == null || client.isBlank() ? "client" : client.replaceAll("[^A-Za-z0-9._-]", "-");
        return "mcp:" + (name.length() > 48 ? name.substring(0, 48) : name);
    }
}
