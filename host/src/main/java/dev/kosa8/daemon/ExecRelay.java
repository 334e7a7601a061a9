package dev.kosa8.daemon;

import dev.kosa8.protocol.Codec;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.ProtocolException;
import dev.kosa8.vm.AgentConnection;
import dev.kosa8.vm.Messages;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Relays one CLI stream (after the HTTP upgrade) to one channel of a
 * sandbox's agent and back. The CLI speaks the agent protocol on channel 1;
 * its first message starts the work (Exec, PutFile or GetFile). Flow control
 * is end to end: the CLI's credits go to the agent, so the daemon holds at
 * most one window per stream. When the CLI goes away first, the guest's
 * process is hung up.
 */
final class ExecRelay extends ChannelInboundHandlerAdapter {
    static final int CLI_CHANNEL = 1;

    private final Supplier<AgentConnection> agentSource;
    private final Runnable onEnd;
    private AgentConnection agent;
    private int agentChannel = -1;
    private boolean starting;
    private boolean finished;
    private final Supplier<Map<String, String>> extraEnv;
    private final dev.kosa8.image.ImageConfig image;
    /** Messages that arrive while the agent is being reached; bounded by the stdin window. */
    private final ArrayDeque<Message> early = new ArrayDeque<>();

    /**
     * @param agentSource gives the agent once the sandbox runs (it may boot first, off the event loop)
     * @param extraEnv    read when the command starts: variables every command in the sandbox gets (its secrets'
     *                    placeholders), under what the client set itself
     * @param image       the config of the sandbox's image: its variables (under the client's), its working
     *                    directory and user (where the client names none)
     * @param onEnd       runs once when the stream ends, however it ends
     */
    ExecRelay(Supplier<AgentConnection> agentSource, Supplier<Map<String, String>> extraEnv,
              dev.kosa8.image.ImageConfig image, Runnable onEnd) {
        this.agentSource = agentSource;
        this.extraEnv = extraEnv;
        this.image = image;
        this.onEnd = onEnd;
    }

    private Message withExtraEnv(Message first) {
        if (!(first instanceof Message.Exec e)) {
            return first;
        }
        Message.ExecSpec spec = e.spec();
        return new Message.Exec(e.channel(), withImage(spec, image, extraEnv.get()));
    }

    /**
     * A command as it runs in a sandbox: the image's variables, then the sandbox's own ({@code extra}: its
     * secrets' placeholders), then the command's; the image's working directory and user where the command names
     * none.
     */
    static Message.ExecSpec withImage(Message.ExecSpec spec, dev.kosa8.image.ImageConfig image,
                                      Map<String, String> extra) {
        Map<String, String> env = new LinkedHashMap<>(image.envMap());
        env.putAll(extra);
        env.putAll(spec.env());
        String cwd = spec.cwd().isEmpty() ? image.workingDir() : spec.cwd();
        // the agent runs a user by name (runuser -u); an image's group is left to the user's own
        String user = spec.user().isEmpty() ? image.user().split(":", 2)[0] : spec.user();
        return new Message.ExecSpec(spec.argv(), env, cwd, user, spec.tty(), spec.rows(), spec.columns());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
        Message m;
        try {
            m = Codec.decode(frame.nioBuffer());
        } catch (ProtocolException e) {
            fail(ctx, "bad message from the client: " + e.getMessage());
            return;
        } finally {
            frame.release();
        }
        if (m.channel() != CLI_CHANNEL) {
            fail(ctx, "the client must use channel " + CLI_CHANNEL);
            return;
        }
        if (agentChannel < 0 && !starting) {
            start(ctx, m);
            return;
        }
        if (starting) {
            if (early.size() > 64) {
                fail(ctx, "too many messages before the command started");
                return;
            }
            early.add(m);
            return;
        }
        relay(ctx, m);
    }

    private void relay(ChannelHandlerContext ctx, Message m) {
        switch (m) {
            case Message.Data d when d.stream() == Message.Stream.STDIN -> forward(ctx, m);
            case Message.Eof e -> forward(ctx, m);
            case Message.Credit c when c.stream() != Message.Stream.STDIN -> forward(ctx, m);
            case Message.Signal s -> forward(ctx, m);
            case Message.Resize r -> forward(ctx, m);
            default -> fail(ctx, "unexpected " + m.getClass().getSimpleName() + " from the client");
        }
    }

    private void forward(ChannelHandlerContext ctx, Message m) {
        if (agentChannel == Integer.MAX_VALUE) {
            return;
        }
        try {
            agent.send(Rechannel.to(m, agentChannel));
        } catch (RuntimeException e) {
            // a client crediting what it never received: its stream is broken, not the agent
            agent.abandon(agentChannel);
            agentChannel = Integer.MAX_VALUE;
            fail(ctx, "the client broke the protocol: " + e.getMessage());
        }
    }

    private void start(ChannelHandlerContext ctx, Message first) {
        if (!(first instanceof Message.Exec || first instanceof Message.PutFile || first instanceof Message.GetFile)) {
            fail(ctx, "the first message must be Exec, PutFile or GetFile");
            return;
        }
        starting = true;
        ctx.channel().config().setAutoRead(false);
        // the agent may not be there yet (run boots a sandbox first): wait off the event loop
        Thread.ofVirtual().name("relay-start").start(() -> {
            AgentConnection a;
            try {
                a = agentSource.get();
            } catch (RuntimeException e) {
                ctx.executor().execute(() -> fail(ctx, e.getMessage()));
                return;
            }
            ctx.executor().execute(() -> {
                agent = a;
                agentChannel = a.open(reply -> toClient(ctx, reply));
                a.send(Rechannel.to(withExtraEnv(first), agentChannel));
                starting = false;
                while (!early.isEmpty()) {
                    relay(ctx, early.poll());
                }
                ctx.channel().config().setAutoRead(true);
            });
        });
    }

    private void toClient(ChannelHandlerContext ctx, Message fromAgent) {
        boolean last = fromAgent instanceof Message.Exited || fromAgent instanceof Message.Failed;
        var f = ctx.writeAndFlush(Unpooled.wrappedBuffer(Codec.encode(Rechannel.to(fromAgent, CLI_CHANNEL))));
        if (last) {
            ctx.executor().execute(() -> finished = true);
            f.addListener(ChannelFutureListener.CLOSE);
        }
    }

    private void fail(ChannelHandlerContext ctx, String why) {
        if (finished) {
            return;
        }
        finished = true;
        Message.Failed f = new Message.Failed(CLI_CHANNEL, Message.ErrorCode.INVALID, Messages.fitText(why));
        ctx.writeAndFlush(Unpooled.wrappedBuffer(Codec.encode(f))).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (!finished && agent != null && agentChannel > 0 && agentChannel != Integer.MAX_VALUE) {
            agent.abandon(agentChannel);
        }
        onEnd.run();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
