package dev.kosa8.daemon;

import dev.kosa8.protocol.Message;

/**
 * The same message on another channel. The daemon relays a CLI's stream,
 * which always uses channel 1, to the channel it opened on the agent
 * connection, and back.
 */
final class Rechannel {
    private Rechannel() {
    }

    static Message to(Message m, int ch) {
        return switch (m) {
            case Message.Exec e -> new Message.Exec(ch, e.spec());
            case Message.Started s -> new Message.Started(ch, s.pid());
            case Message.Data d -> new Message.Data(ch, d.stream(), d.bytes());
            case Message.Eof e -> new Message.Eof(ch, e.stream());
            case Message.Credit c -> new Message.Credit(ch, c.stream(), c.bytes());
            case Message.Signal s -> new Message.Signal(ch, s.signal());
            case Message.Resize r -> new Message.Resize(ch, r.rows(), r.columns());
            case Message.Exited x -> new Message.Exited(ch, x.exitCode(), x.signal());
            case Message.Failed f -> new Message.Failed(ch, f.code(), f.message());
            case Message.PutFile p -> new Message.PutFile(ch, p.path(), p.mode(), p.user());
            case Message.GetFile g -> new Message.GetFile(ch, g.path());
            case Message.FileInfo f -> new Message.FileInfo(ch, f.size(), f.mode());
            case Message.MountWorkspace mw ->
                    throw new dev.kosa8.protocol.ProtocolException("only the daemon mounts the workspace");
            case Message.Freeze f -> throw new dev.kosa8.protocol.ProtocolException("only the daemon freezes the guest");
            case Message.Thaw t -> throw new dev.kosa8.protocol.ProtocolException("only the daemon thaws the guest");
            case Message.NetOpen _, Message.NetReset _, Message.NetWindowReady _, Message.NetWindowData _,
                 Message.NetWindowReturn _ ->
                    throw new dev.kosa8.protocol.ProtocolException("network streams have a link of their own");
            case Message.Connect c -> throw new dev.kosa8.protocol.ProtocolException("only the daemon connects to a "
                    + "sandbox's published ports");
            case Message.FileRequest f -> throw new dev.kosa8.protocol.ProtocolException("file operations go through "
                    + "the daemon's files API");
            case Message.FileEntries f -> throw new dev.kosa8.protocol.ProtocolException("file operations go through "
                    + "the daemon's files API");
            case Message.WatchEvents e -> throw new dev.kosa8.protocol.ProtocolException("file operations go through "
                    + "the daemon's files API");
            case Message.Ask a -> throw new dev.kosa8.protocol.ProtocolException("only the guest asks");
            case Message.Answer a -> throw new dev.kosa8.protocol.ProtocolException("only the daemon answers asks");
            case Message.Hello h -> h;
            case Message.Ping p -> p;
            case Message.Pong p -> p;
        };
    }
}
