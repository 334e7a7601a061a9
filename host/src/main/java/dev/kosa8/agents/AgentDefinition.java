package dev.kosa8.agents;

import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One coding agent as {@code kosa8 agent NAME} runs it (docs/agents.md, "Agent definitions"): the image it runs in,
 * the hosts it reaches, the keys it is given and the header each goes in, its environment, the files that wire its
 * pre-tool hook to kosa8's turn checkpoints, and its command. Read from a TOML file ({@link AgentDefinitions}), so
 * adding an agent is data.
 *
 * @param dockerfile the agent's image, as a Dockerfile built by {@code kosa8 image build}
 * @param buildAllow the hosts the image's RUN steps reach (npm, Debian)
 * @param allow      the hosts the agent reaches, presets included
 * @param env        variables every run of the agent gets
 * @param files      files put in the agent user's home when its sandbox is made
 * @param command    the agent's program and its arguments
 * @param resume     what replaces the user's arguments to reopen the agent's latest session in this folder
 *                   ({@code --continue}): {@code kosa8 agent} runs it after a rewind ends the session it showed;
 *                   empty when the agent has no such option, and then the UI is not reopened
 */
public record AgentDefinition(String name, String description, String dockerfile, List<String> buildAllow,
                              List<String> allow, List<AgentSecret> secrets, Map<String, String> env,
                              List<HomeFile> files, List<String> command, List<String> resume) {
    /** An agent's name: what `kosa8 agent NAME` takes and the image and sandbox are named after. */
    static final Pattern NAME = Pattern.compile("[a-z][a-z0-9-]{0,31}");

    public AgentDefinition {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("bad agent name '" + name + "': lower-case letters, digits and '-', "
                    + "starting with a letter, at most 32");
        }
        description = description == null ? "" : description;
        if (dockerfile == null || dockerfile.isBlank()) {
            throw new IllegalArgumentException("an agent needs a dockerfile");
        }
        if (command == null || command.isEmpty() || command.getFirst().isBlank()) {
            throw new IllegalArgumentException("an agent needs a command");
        }
        buildAllow = List.copyOf(buildAllow == null ? List.of() : buildAllow);
        allow = List.copyOf(allow == null ? List.of() : allow);
        secrets = List.copyOf(secrets == null ? List.of() : secrets);
        env = Map.copyOf(env == null ? Map.of() : env);
        files = List.copyOf(files == null ? List.of() : files);
        command = List.copyOf(command);
        resume = List.copyOf(resume == null ? List.of() : resume);
    }

    /**
     * A key the agent reads from {@code name}, bound by {@code kosa8 secret set NAME --host HOST --header HEADER}.
     *
     * @param header as {@code kosa8 secret set --header} takes it: {@code Name: value {}}
     */
    public record AgentSecret(String name, String host, String header) {
        /** The command that stores it as this agent expects. */
        public String setCommand() {
            return "kosa8 secret set " + name + " --host " + host
                    + (header.equals("Authorization: Bearer {}") ? "" : " --header '" + header + "'");
        }
    }

    /**
     * A file put in the home directory of the user the agent runs as, unless one is there already.
     *
     * @param path relative to that home ({@code .claude/settings.json}); written {@code ~/.claude/settings.json}
     */
    public record HomeFile(String path, String content) {
        private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*");

        public HomeFile {
            if (path == null || !PLAIN.matcher(path).matches() || ("/" + path + "/").contains("/../")
                    || ("/" + path + "/").contains("/./")) {
                throw new IllegalArgumentException("bad file path '~/" + path + "': a path below the home directory "
                        + "of letters, digits, '.', '_' and '-', without '.' or '..' steps");
            }
            content = content == null ? "" : content;
        }
    }
}
