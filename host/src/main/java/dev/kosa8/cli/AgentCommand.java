package dev.kosa8.cli;

import dev.kosa8.client.ExecChannel;
import dev.kosa8.client.SandboxRewoundException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.kosa8.agents.AgentDefinition;
import dev.kosa8.agents.AgentDefinitions;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import dev.kosa8.protocol.Message;
import dev.kosa8.secrets.SecretSpec;
import dev.kosa8.secrets.SecretStore;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "agent", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run a coding agent (claude, codex, gemini) on this folder in a sandbox of its own.",
            "The first run builds the agent's image (Node and the agent's npm package, a few minutes, once) and makes "
                    + "a sandbox for this folder and agent; later runs resume it, so the agent's home directory "
                    + "(its settings, history, logins, the tools it installed) is kept between sessions. The agent's "
                    + "terminal UI opens here, in the folder, which the sandbox sees live; the exit code is the "
                    + "agent's.",
            "The sandbox reaches only the agent's API hosts (and what --allow or .kosa8/config.toml add). Keys stay "
                    + "on this machine: set them once with `kosa8 secret set` (kosa8 agent prints the line when none is set), and "
                    + "the sandbox holds placeholders. Before each tool call that can change anything, the agent's "
                    + "hook takes a turn checkpoint: `kosa8 checkpoints ID`, `kosa8 rewind ID --turn N`.",
            "Options as for `kosa8 run` set the sandbox when it is made (the project's .kosa8/config.toml too); "
                    + "--image replaces the agent's own image. See docs/agents.md."},
        footer = {"", "Examples:",
            "  kosa8 secret set ANTHROPIC_API_KEY --host api.anthropic.com --header 'x-api-key: {}'",
            "  kosa8 agent claude                        # Claude Code on this folder",
            "  kosa8 agent claude -- -p 'fix the failing test'   # arguments after -- go to the agent",
            "  kosa8 agent codex --allow @pypi           # also reach PyPI",
            "  kosa8 agent ls                            # every folder's agents and their sandboxes",
            "  kosa8 agent rm claude                     # remove this folder's claude sandbox (its home goes too)"},
        subcommands = {AgentCommand.Ls.class, AgentCommand.Rm.class})
final class AgentCommand implements Callable<Integer> {
    /** A file put in the agent's home exists already: left as it is. */
    private static final int EXISTS = 3;
    /** Writes stdin to $HOME/$1 unless something is there. */
    private static final String PUT_HOME_FILE =
            "f=\"$HOME/$1\"; [ -e \"$f\" ] && exit " + EXISTS + "; mkdir -p \"$(dirname \"$f\")\" && cat > \"$f\"";

    @ParentCommand
    Main main;

    @Mixin
    SandboxOptions sandbox = new SandboxOptions();

    // optional for picocli, so that `kosa8 agent ls` and `kosa8 agent rm` need none; call() asks for it
    @Parameters(index = "0", arity = "0..1", paramLabel = "AGENT",
            description = "claude, codex, gemini, or your own (docs/agents.md).")
    String name;

    @Parameters(index = "1..*", paramLabel = "ARGS", description = "Arguments for the agent, after --.")
    List<String> args = new ArrayList<>();

    static AgentDefinitions definitions() {
        return new AgentDefinitions(HostPaths.config().resolve("agents"));
    }

    @Override
    public Integer call() {
        if (name == null) {
            throw new KosaException(KosaException.Kind.USAGE, "name the agent to run",
                    "kosa8 agent " + String.join("|", definitions().names()) + " [-- ARGS]; kosa8 agent ls lists "
                            + "their sandboxes");
        }
        AgentDefinition agent = definitions().load(name);
        Path folder = folder(sandbox);
        sandbox.warnOfWindowsDrive(System.err);
        sandbox.workspace = folder.toString(); // the guest sees it at its real path, which the session is keyed by
        Images.ensure(main.paths, System.err);
        DaemonClient daemon = main.daemon();
        if (sandbox.image == null) {
            sandbox.image = AgentImage.ensure(daemon, main.paths, agent);
        }
        AgentSessions sessions = new AgentSessions(main.paths.data());
        String id = sessions.locked(() -> sandboxFor(daemon, sessions, agent, folder));
        List<String> argv = new ArrayList<>(agent.command());
        argv.addAll(args);
        boolean tty = Terminal.isInteractive();
        StdinHandoff stdin = new StdinHandoff(System.in);
        while (true) {
            int[] size = tty ? Terminal.size() : new int[] {0, 0};
            var spec = new Message.ExecSpec(argv, agent.env(), folder.toString(), "", tty, size[0], size[1]);
            try (StdinHandoff.View in = stdin.view()) {
                return Exec.run(daemon.upgrade("/v1/sandboxes/" + id + "/exec"), spec, true, in);
            } catch (SandboxRewoundException r) {
                if (!tty || agent.resume().isEmpty()) {
                    throw r;
                }
                // the machine is back at a turn's checkpoint, and the session that was on screen ended with the
                // machine it ran in: the agent's own resume option reopens its latest session, as it was then
                argv = new ArrayList<>(agent.command());
                argv.addAll(agent.resume());
                System.err.println("\r\nkosa8: " + r.getMessage() + "; reopening " + agent.name()
                        + "'s latest session there (" + String.join(" ", argv) + ")\r");
            }
        }
    }

    /** The folder the agent works on, as its real path: the same folder always finds the same sandbox. */
    static Path folder(SandboxOptions sandbox) {
        String w = sandbox.workspaceFolder();
        if (w.isEmpty()) {
            throw new KosaException(KosaException.Kind.USAGE, "an agent needs a folder to work on",
                    "run kosa8 agent in the project's folder, or give it with --workspace DIR");
        }
        try {
            return Path.of(w).toRealPath();
        } catch (NoSuchFileException e) {
            throw new KosaException(KosaException.Kind.USAGE, "there is no folder " + w,
                    "run kosa8 agent in the project's folder, or give an existing one with --workspace DIR");
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot read the folder " + w + ": " + e.getMessage(),
                    "check its permissions");
        }
    }

    /** This folder's sandbox for the agent: resumed when there is one, else made, with the agent's files put in. */
    private String sandboxFor(DaemonClient daemon, AgentSessions sessions, AgentDefinition agent, Path folder) {
        String key = AgentSessions.name(agent.name(), folder);
        AgentSessions.Session s = sessions.all().get(key);
        if (s != null) {
            String state = states(daemon).get(s.sandbox());
            if (state != null) {
                return resume(daemon, s, state, agent);
            }
            System.err.println("kosa8: the " + agent.name() + " sandbox " + s.sandbox() + " of this folder is gone; "
                    + "making a new one");
            sessions.remove(key);
        }
        StringBuilder q = new StringBuilder(sandbox.query());
        EffectiveSettings e = sandbox.effective();
        for (String rule : agent.allow()) {
            q.append("&allow=").append(SandboxOptions.enc(rule));
        }
        for (String secret : secrets(agent, e.list("secrets"))) {
            q.append("&secret=").append(SandboxOptions.enc(secret));
        }
        String id = daemon.post("/v1/sandboxes?" + q).path("id").asText();
        sessions.put(new AgentSessions.Session(key, agent.name(), folder.toString(), id, sandbox.image,
                Instant.now().toString()));
        System.err.println("kosa8: sandbox " + id + " is " + agent.name() + "'s for " + folder
                + "; it stays between runs (kosa8 agent ls, kosa8 agent rm " + agent.name() + ")");
        for (AgentDefinition.HomeFile f : agent.files()) {
            putHomeFile(daemon, id, f);
        }
        return id;
    }

    private String resume(DaemonClient daemon, AgentSessions.Session s, String state, AgentDefinition agent) {
        if (!s.image().equals(sandbox.image)) {
            System.err.println("kosa8: this folder's " + s.agent() + " sandbox was made from " + s.image() + ", not "
                    + sandbox.image + "; `kosa8 agent rm " + s.agent() + "` starts afresh from the new one");
        }
        switch (state) {
            case "running", "starting", "attaching" -> {
                // in use as it is
            }
            case "stopped" -> daemon.post("/v1/sandboxes/" + s.sandbox() + "/start");
            default -> throw new KosaException(KosaException.Kind.STATE, "this folder's " + s.agent() + " sandbox "
                    + s.sandbox() + " is " + state, "`kosa8 logs " + s.sandbox() + "` says why; `kosa8 agent rm "
                    + s.agent() + "` removes it (its home directory too) and the next run makes a new one");
        }
        // the agent's keys set since the sandbox was made
        java.util.Set<String> held = new java.util.HashSet<>();
        daemon.get("/v1/sandboxes/" + s.sandbox()).path("secrets").forEach(g -> held.add(g.path("name").asText()));
        List<String> missing = secrets(agent, List.copyOf(held)).stream().filter(n -> !held.contains(n)).toList();
        if (!missing.isEmpty()) {
            daemon.post("/v1/sandboxes/" + s.sandbox() + "/secrets/grant" + SecretGrantCommand.query(missing));
            System.err.println("kosa8: sandbox " + s.sandbox() + " now has " + String.join(", ", missing)
                    + " (as a placeholder)");
        }
        return s.sandbox();
    }

    /**
     * The secrets the sandbox gets: the command line's or the project's, and the agent's that are set. Says how
     * to set the agent's when none is, and when one is bound to another host or header than the agent sends.
     */
    private static List<String> secrets(AgentDefinition agent, List<String> given) {
        List<String> out = new ArrayList<>();
        SecretStore store = SecretStore.open();
        for (AgentDefinition.AgentSecret want : agent.secrets()) {
            Optional<SecretSpec> have = store.spec(want.name());
            if (have.isEmpty() || given.contains(want.name())) {
                continue;
            }
            if (!have.get().host().equals(want.host()) || !have.get().header().equals(want.header())) {
                System.err.println("kosa8: secret " + want.name() + " is set for " + have.get().host() + " in '"
                        + have.get().header() + "', where " + agent.name() + " sends it to " + want.host() + " in '"
                        + want.header() + "': " + want.setCommand() + " sets it again");
            }
            out.add(want.name());
        }
        if (out.isEmpty() && given.isEmpty() && !agent.secrets().isEmpty()) {
            System.err.println("kosa8: no key for " + agent.name() + " is set; the sandbox gets it as a placeholder "
                    + "once you set one with: " + String.join(" or ",
                    agent.secrets().stream().map(AgentDefinition.AgentSecret::setCommand).toList())
                    + "; the next `kosa8 agent " + agent.name() + "` gives it to the sandbox");
        }
        return out;
    }

    /** Writes one of the agent's files into its user's home, unless the image or the user put one there. */
    private static void putHomeFile(DaemonClient daemon, String id, AgentDefinition.HomeFile f) {
        var spec = new Message.ExecSpec(List.of("sh", "-c", PUT_HOME_FILE, "sh", f.path()), Map.of(), "", "", false,
                0, 0);
        ExecChannel exec = new ExecChannel(daemon.upgrade("/v1/sandboxes/" + id + "/exec"));
        exec.send(new Message.Exec(ExecChannel.CH, spec));
        exec.pumpStdin(new ByteArrayInputStream(f.content().getBytes(StandardCharsets.UTF_8)));
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = exec.await(new ByteArrayOutputStream(), err, null);
        if (code == EXISTS) {
            System.err.println("kosa8: ~/" + f.path() + " is in the image already, left as it is (docs/agents.md says "
                    + "what kosa8 puts there)");
        } else if (code != 0) {
            System.err.println("kosa8: could not write ~/" + f.path() + " in sandbox " + id + " (exit " + code + "): "
                    + err.toString(StandardCharsets.UTF_8).strip());
        }
    }

    /** Every sandbox's state, by id. */
    static Map<String, String> states(DaemonClient daemon) {
        Map<String, String> m = new HashMap<>();
        for (JsonNode s : daemon.get("/v1/sandboxes")) {
            m.put(s.path("id").asText(), s.path("state").asText());
        }
        return m;
    }

    @Command(name = "ls", mixinStandardHelpOptions = true,
            description = {"List the agents' sandboxes: NAME (the agent and its folder's hash), AGENT, SANDBOX, "
                    + "STATE, FOLDER. `gone` when the sandbox was removed otherwise; the next run makes a new one."})
    static final class Ls implements Callable<Integer> {
        @ParentCommand
        AgentCommand parent;

        @Override
        public Integer call() {
            Map<String, String> states = states(parent.main.daemon());
            String fmt = "%-20s  %-8s  %-12s  %-9s  %s%n";
            System.out.printf(fmt, "NAME", "AGENT", "SANDBOX", "STATE", "FOLDER");
            for (AgentSessions.Session s : new AgentSessions(parent.main.paths.data()).list(null)) {
                System.out.printf(fmt, s.name(), s.agent(), s.sandbox(), states.getOrDefault(s.sandbox(), "gone"),
                        s.folder());
            }
            return 0;
        }
    }

    @Command(name = "rm", mixinStandardHelpOptions = true,
            description = {"Remove agents' sandboxes, running or not, with their home directories (settings, history, "
                    + "logins); the folder is not touched, and changes held for review stay for `kosa8 review ID`.",
                "AGENT alone means this folder's (or --workspace DIR's); a NAME from `kosa8 agent ls` means that one."},
            footer = {"", "Examples:", "  kosa8 agent rm claude", "  kosa8 agent rm codex-3f2a91c04b7e"})
    static final class Rm implements Callable<Integer> {
        @ParentCommand
        AgentCommand parent;

        @picocli.CommandLine.Option(names = "--workspace", paramLabel = "DIR",
                description = "The folder whose agent AGENT means (default: the current directory).")
        String workspace;

        @Parameters(arity = "1..*", paramLabel = "AGENT|NAME", description = "What to remove.")
        List<String> names;

        @Override
        public Integer call() {
            AgentSessions sessions = new AgentSessions(parent.main.paths.data());
            DaemonClient daemon = parent.main.daemon();
            return sessions.locked(() -> {
                Map<String, AgentSessions.Session> all = sessions.all();
                Map<String, AgentSessions.Session> chosen = new LinkedHashMap<>();
                for (String n : names) {
                    AgentSessions.Session s = all.get(n);
                    if (s == null && definitions().names().contains(n)) {
                        SandboxOptions o = new SandboxOptions();
                        o.workspace = workspace;
                        s = all.get(AgentSessions.name(n, folder(o)));
                    }
                    if (s == null) {
                        throw new KosaException(KosaException.Kind.USAGE, "no agent sandbox '" + n + "'"
                                + (definitions().names().contains(n) ? " for this folder" : ""),
                                "`kosa8 agent ls` lists them");
                    }
                    chosen.put(s.name(), s);
                }
                Map<String, String> states = states(daemon);
                for (AgentSessions.Session s : chosen.values()) {
                    if (states.containsKey(s.sandbox())) {
                        JsonNode r = daemon.delete("/v1/sandboxes/" + s.sandbox() + "?force=true");
                        if (r.path("heldKept").asInt() > 0) {
                            System.err.println("kosa8: " + r.path("heldKept").asInt() + " held change(s) kept: kosa8 "
                                    + "review " + s.sandbox());
                        }
                    }
                    sessions.remove(s.name());
                    System.out.println("removed " + s.name() + " (sandbox " + s.sandbox() + ")");
                }
                return 0;
            });
        }
    }
}
