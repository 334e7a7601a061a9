package dev.kosa8.client;

/**
 * The sandbox was put back to a checkpoint while the command ran: its process is not in the machine that runs now.
 * The sandbox itself runs on, from the checkpoint; run the command again if it is still wanted. A program driving an
 * agent reattaches this way ({@code kosa8 agent} reopens the agent's session, docs/agents.md).
 */
public final class SandboxRewoundException extends Kosa8Exception {
    SandboxRewoundException(String message) {
        super(Kind.STATE, message, "the sandbox runs on from that checkpoint; run the command again if it is still "
                + "wanted", Kind.STATE.exitCode(), null);
    }
}
