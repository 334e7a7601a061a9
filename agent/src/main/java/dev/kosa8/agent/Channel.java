package dev.kosa8.agent;

import dev.kosa8.protocol.Message;

/**
 * One unit of work the host started on a channel: a process, or a file
 * transfer. The session routes the host's messages for the channel here.
 */
sealed interface Channel permits ProcessChannel, PutFileChannel, GetFileChannel, PortChannel, FileOpChannel {

    /** Bytes for the channel's stdin. */
    void onData(byte[] bytes);

    /** The host will send no more stdin. */
    void onEof();

    /** The host has consumed output of a stream and grants more window. */
    void onCredit(Message.Stream stream, int bytes);

    void onSignal(int signal);

    void onResize(int rows, int columns);

    /** The host has gone: stop streaming and release everything; processes get SIGHUP. */
    void hangUp();
}
