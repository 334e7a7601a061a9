package dev.kosa8.daemon;

import java.time.Instant;

/**
 * One turn checkpoint (docs/agents.md): taken because the guest asked, before
 * an agent's tool call.
 *
 * @param turn       the sandbox's turn number, from 1, never reused
 * @param checkpoint the checkpoint's id
 * @param label      what the guest said the turn is ({@code Bash}, {@code Edit}); its own words, shown as such
 * @param ask        the agent's number for the ask, answered again when the machine is rewound to this checkpoint
 * @param created    when it was taken
 * @param bytes      what it had stored on disk when taken (machine state and folder files); thinning counts this or
 *                   what its record says later, whichever is more (a checkpoint still committing when taken)
 */
record Turn(int turn, String checkpoint, String label, long ask, Instant created, long bytes) {
}
