package dev.kosa8.processes;

import dev.kosa8.protocol.Message;
import java.util.function.Consumer;

/**
 * The part of a sandbox's agent connection that processes use: channels opened on it, messages sent on them.
 * The daemon hands in its {@code vm.AgentConnection}; tests a guest of their own.
 */
public interface Guest {
    /** Opens a channel whose messages from the guest go to {@code listener}, which must not block. */
    int open(Consumer<Message> listener);

    /** Queues a message for the guest. */
    void send(Message m);
}
