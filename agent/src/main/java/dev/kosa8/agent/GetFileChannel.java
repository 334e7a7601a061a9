package dev.kosa8.agent;

import dev.kosa8.protocol.Message;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** Streams a guest file to the host as the channel's stdout. */
final class GetFileChannel implements Channel {
    private final OutputPump pump;

    private GetFileChannel(int channel, Outbox outbox, InputStream in) {
        this.pump = new OutputPump(channel, Message.Stream.STDOUT, outbox, max -> {
            byte[] b = in.readNBytes(max);
            return b;
        }, false);
        Thread.ofVirtual().name("get-" + channel).start(() -> {
            try (in) {
                pump.awaitDone();
                outbox.send(new Message.Exited(channel, 0, 0));
            } catch (IOException | InterruptedException e) {
                outbox.send(new Message.Failed(channel, Message.ErrorCode.INTERNAL, "reading file: " + e.getMessage()));
            } finally {
                outbox.done(channel);
            }
        });
    }

    static GetFileChannel start(int channel, Message.GetFile req, Outbox outbox) {
        Path path = Path.of(req.path());
        try {
            if (!Files.isRegularFile(path)) {
                boolean dir = Files.isDirectory(path);
                outbox.send(new Message.Failed(channel, dir ? Message.ErrorCode.IS_DIRECTORY
                        : Message.ErrorCode.NOT_FOUND, req.path() + (dir ? " is a directory"
                        : " does not exist in the sandbox")));
                return null;
            }
            InputStream in = Files.newInputStream(path);
            long size = Files.size(path);
            int mode = dev.kosa8.protocol.FileMode.of(Files.getPosixFilePermissions(path));
            outbox.send(new Message.FileInfo(channel, size, mode));
            return new GetFileChannel(channel, outbox, in);
        } catch (NoSuchFileException e) {
            outbox.send(new Message.Failed(channel, Message.ErrorCode.NOT_FOUND, req.path() + " does not exist in the sandbox"));
        } catch (AccessDeniedException e) {
            outbox.send(new Message.Failed(channel, Message.ErrorCode.PERMISSION, "permission denied: " + req.path()));
        } catch (IOException e) {
            FileOps.Failure f = FileOps.failure(e, req.path());
            outbox.send(new Message.Failed(channel, f.code, dev.kosa8.protocol.Limits.fit("cannot read "
                    + f.getMessage())));
        }
        return null;
    }

    @Override
    public void onData(byte[] bytes) {
        throw new dev.kosa8.protocol.ProtocolException("data sent to a file download");
    }

    @Override
    public void onEof() {
        // nothing to close: the host sends no stdin for a download
    }

    @Override
    public void onCredit(Message.Stream stream, int bytes) {
        if (stream == Message.Stream.STDOUT) {
            pump.credit(bytes);
        }
    }

    @Override
    public void onSignal(int signal) {
        pump.close();
    }

    @Override
    public void onResize(int rows, int columns) {
        // not a terminal
    }

    @Override
    public void hangUp() {
        pump.close();
    }
}
