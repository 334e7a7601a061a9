package dev.kosa8.image;

import dev.kosa8.host.KosaException;

import java.io.IOException;
import java.io.InputStream;

/**
 * The files kosa8 itself puts into the initramfs: the {@code /init} script,
 * the agent's launcher script, the agent's jar and {@code kosa8-guest} (what a guest program may ask the host,
 * docs/agents.md), all resources of this build.
 */
record GuestFiles(byte[] init, byte[] launcher, byte[] agentJar, byte[] guestCommand) {
    static final String AGENT_JAR = "kosa8-agent.jar";

    static GuestFiles fromResources() {
        return new GuestFiles(resource("init.sh"), resource("kosa8-agent.sh"), resource(AGENT_JAR), resource("kosa8-guest.sh"));
    }

    /** A guest file shipped in kosa8's jar beside this class; an error saying how to build kosa8 when it lacks one. */
    static byte[] resource(String name) {
        try (InputStream in = GuestFiles.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new KosaException(KosaException.Kind.INTERNAL,
                        "this kosa8 build lacks the resource /dev/kosa8/image/" + name,
                        "build kosa8 with `mvn package` from the project root, which embeds the guest files");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.INTERNAL, "cannot read the resource " + name, "", e);
        }
    }
}
