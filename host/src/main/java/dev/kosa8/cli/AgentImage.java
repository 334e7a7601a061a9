package dev.kosa8.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kosa8.agents.AgentDefinition;
import dev.kosa8.host.HostPaths;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * An agent's image: its definition's Dockerfile built once by {@code kosa8 image build}, named for the agent and
 * the Dockerfile's content ({@code kosa8/agent-claude:3f2a91c04b7e}), so a changed definition builds anew while an
 * unchanged one is found by name and not built again. A rebuild after {@code kosa8 image rm} takes every step from
 * the build cache.
 */
final class AgentImage {
    private AgentImage() {
    }

    /** The image's name: the agent's, tagged with the first 12 hex digits of the Dockerfile's SHA-256. */
    static String name(AgentDefinition agent) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(agent.dockerfile().getBytes(StandardCharsets.UTF_8));
            return "kosa8/agent-" + agent.name() + ":" + HexFormat.of().formatHex(d).substring(0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The agent's image, built first (steps shown on stderr) unless an image of its name is there. */
    static String ensure(DaemonClient daemon, HostPaths paths, AgentDefinition agent) {
        String name = name(agent);
        for (JsonNode i : daemon.get("/v1/images")) {
            if (name.equals(i.path("name").asText())) {
                return name;
            }
        }
        System.err.println("kosa8: building the " + agent.name() + " agent's image " + name
                + " (once; later runs reuse it)");
        try {
            Path context = paths.data().resolve("agents").resolve("images").resolve(name.replace('/', '-')
                    .replace(':', '-'));
            Files.createDirectories(context);
            Path dockerfile = context.resolve("Dockerfile");
            Files.writeString(dockerfile, agent.dockerfile(), StandardCharsets.UTF_8);
            StringBuilder q = new StringBuilder("context=" + SandboxOptions.enc(context.toString()) + "&dockerfile="
                    + SandboxOptions.enc(dockerfile.toString()) + "&tag=" + SandboxOptions.enc(name)
                    + "&noCache=false&verbose=false&cpus=" + SandboxOptions.DEFAULT_CPUS + "&memoryMiB=1024");
            for (String a : agent.buildAllow()) {
                q.append("&allow=").append(SandboxOptions.enc(a));
            }
            ImageCommand.Build.follow(daemon, q.toString());
            System.err.println("kosa8: image " + name + " built");
            return name;
        } catch (KosaException e) {
            // a step that failed (the message names its line and the build's log) may have been refused its hosts
            String hint = e.kind() != KosaException.Kind.USAGE || agent.buildAllow().isEmpty() ? ""
                    : "; a step reaches only " + String.join(", ", agent.buildAllow()) + ", and a host of them that "
                            + "resolves to a private or reserved address here needs an address exception in "
                            + "network.json (`kosa8 net`; docs/network.md, \"Your own settings\")";
            throw new KosaException(e.kind(), "the " + agent.name() + " agent's image did not build: " + e.getMessage(),
                    e.suggestion() + hint, e);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.IMAGE, "the " + agent.name() + " agent's image did not build: "
                    + e.getMessage(), "see the daemon's log at " + paths.daemonLog(), e);
        }
    }
}
