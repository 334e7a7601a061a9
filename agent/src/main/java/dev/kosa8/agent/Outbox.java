package dev.kosa8.agent;

import dev.kosa8.protocol.Message;

/** Where a channel sends its messages to the host, and reports that it is over. */
interface Outbox {
    /** Sends a message; returns false if the host has gone (the message is dropped). */
    boolean send(Message m);

    /** The channel has finished; its number may be reused by the host. */
    void done(int channel);
}
