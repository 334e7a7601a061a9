package dev.kosa8.agent;

import dev.kosa8.protocol.Message;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Writes a guest file from the channel's stdin. The bytes go to a temporary
 * file beside the target, which replaces the target only once the host has
 * sent everything: an interrupted copy never leaves a half-written file.
 */
final class PutFileChannel implements Channel {
    private final int channel;
    private final Outbox outbox;
    private final Path target;
    private final Path temp;
    private final FileChannel file;
    private final int mode;
    /** Who owns the file written; null: the target's owner if it is there, else root. */
    private final GuestUsers.Ids owner;
    private final StdinPump pump;
    private volatile boolean failed;
    private volatile boolean hungUp;

    private PutFileChannel(int channel, Outbox outbox, Path target, Path temp, FileChannel file, int mode,
                           GuestUsers.Ids owner) {
        this.channel = channel;
        this.outbox = outbox;
        this.target = target;
        this.temp = temp;
        this.file = file;
        this.mode = mode;
        this.owner = owner;
        OutputStream out = java.nio.channels.Channels.newOutputStream(file);
        this.pump = new StdinPump(channel, outbox, new StdinPump.Sink() {
            @Override
            public void write(byte[] bytes) throws IOException {
                try {
                    out.write(bytes);
                } catch (IOException e) {
                    fail(e);
                    throw e;
                }
            }

            @Override
            public void close() throws IOException {
                file.close();
            }
        }, this::finish);
    }

    static PutFileChannel start(int channel, Message.PutFile req, Outbox outbox) {
        Path target = Path.of(req.path());
        try {
            if (Files.isDirectory(target)) {
                outbox.send(new Message.Failed(channel, Message.ErrorCode.IS_DIRECTORY, req.path() + " is a directory"));
                return null;
            }
            GuestUsers.Ids owner = req.user().isEmpty() ? null : GuestUsers.guest().ids(req.user());
            Path dir = target.toAbsolutePath().getParent();
            Path temp = Files.createTempFile(dir, "." + target.getFileName() + ".", ".kosa8-part");
            FileChannel fc = FileChannel.open(temp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
            return new PutFileChannel(channel, outbox, target, temp, fc, req.mode(), owner);
        } catch (FileOps.Failure f) {
            outbox.send(new Message.Failed(channel, f.code, dev.kosa8.protocol.Limits.fit(f.getMessage())));
        } catch (NoSuchFileException e) {
            outbox.send(new Message.Failed(channel, Message.ErrorCode.NOT_FOUND,
                    "directory " + target.getParent() + " does not exist in the sandbox"));
        } catch (AccessDeniedException e) {
            outbox.send(new Message.Failed(channel, Message.ErrorCode.PERMISSION, "permission denied: " + req.path()));
        } catch (IOException e) {
            FileOps.Failure f = FileOps.failure(e, req.path());
            outbox.send(new Message.Failed(channel, f.code, dev.kosa8.protocol.Limits.fit("cannot write "
                    + f.getMessage())));
        }
        return null;
    }

    private void fail(IOException e) {
        if (!failed) {
            failed = true;
            outbox.send(new Message.Failed(channel, Message.ErrorCode.INTERNAL, "writing " + target + ": " + e.getMessage()));
        }
    }

    private void finish() {
        try {
            if (failed || hungUp) {
                Files.deleteIfExists(temp);
                return;
            }
            file.close();
            Files.setPosixFilePermissions(temp, dev.kosa8.protocol.FileMode.permissions(mode));
            GuestUsers.Ids ids = owner;
            if (ids == null && Files.exists(target)) {
                java.util.Map<String, Object> a = Files.readAttributes(target, "unix:uid,gid");
                ids = new GuestUsers.Ids((Integer) a.get("uid"), (Integer) a.get("gid"));
            }
            if (ids != null) {
                FileOps.own(temp, ids);
            }
            Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            outbox.send(new Message.Exited(channel, 0, 0));
        } catch (IOException e) {
            fail(e);
            try {
                Files.deleteIfExists(temp);
            } catch (IOException ignored) {
                // nothing more to do
            }
        } finally {
            outbox.done(channel);
        }
    }

    @Override
    public void onData(byte[] bytes) {
        pump.offer(bytes);
    }

    @Override
    public void onEof() {
        pump.end();
    }

    @Override
    public void onCredit(Message.Stream stream, int bytes) {
        throw new dev.kosa8.protocol.ProtocolException("credit sent to a file upload");
    }

    @Override
    public void onSignal(int signal) {
        hangUp();
    }

    @Override
    public void onResize(int rows, int columns) {
        // not a terminal
    }

    @Override
    public void hangUp() {
        hungUp = true;
        pump.end();
    }
}
