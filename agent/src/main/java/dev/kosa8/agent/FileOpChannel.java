package dev.kosa8.agent;

import dev.kosa8.protocol.Message;

/** Runs a {@link Message.FileRequest} (work in progress). */
final class FileOpChannel implements Channel {
    static FileOpChannel start(Message.FileRequest req, Outbox outbox) {
        outbox.send(new Message.Failed(req.channel(), Message.ErrorCode.INTERNAL, "not yet"));
        return null;
    }

    @Override
    public void onData(byte[] bytes) {
    }

    @Override
    public void onEof() {
    }

    @Override
    public void onCredit(Message.Stream stream, int bytes) {
    }

    @Override
    public void onSignal(int signal) {
    }

    @Override
    public void onResize(int rows, int columns) {
    }

    @Override
    public void hangUp() {
    }
}
