package dev.kosa8.files;

import dev.kosa8.protocol.Message;
import java.util.function.Consumer;

/**
 * The part of a sandbox's agent connection file operations use. The daemon hands in its {@code vm.AgentConnection};
 * tests a guest of their own.
 */
public interface FileGuest {
    /** Opens a channel whose messages from the guest go to {@code listener}, which must not block. */
    int open(Consumer<Message> listener);

    /** Queues a message for the guest. */
    void send(Message m);

    /** Forgets a channel whose work is no longer wanted; the guest is told to stop it. */
    void abandon(int channel);
}
