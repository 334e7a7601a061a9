package dev.kosa8.cli;

import dev.kosa8.client.ExecChannel;
import dev.kosa8.client.DaemonConnection;
import dev.kosa8.protocol.Message;

/** Runs one command over an exec stream, wiring this process's stdio, signals and terminal to it. */
final class Exec {
    private Exec() {
    }

    static int run(DaemonConnection.Stream stream, Message.ExecSpec spec, boolean interactive) {
        return run(stream, spec, interactive, System.in);
    }

    /** As {@link #run(DaemonConnection.Stream, Message.ExecSpec, boolean)}, with stdin read from {@code stdin}. */
    static int run(DaemonConnection.Stream stream, Message.ExecSpec spec, boolean interactive,
                   java.io.InputStream stdin) {
        ExecChannel exec = new ExecChannel(stream);
        Runnable restore = () -> { };
        if (spec.tty() && Terminal.isInteractive()) {
            restore = Terminal.raw();
        }
        try {
            exec.send(new Message.Exec(ExecChannel.CH, spec));
            Signals.forward(sig -> exec.send(new Message.Signal(ExecChannel.CH, sig)), spec.tty() ? () -> {
                int[] s = Terminal.size();
                exec.send(new Message.Resize(ExecChannel.CH, s[0], s[1]));
            } : null);
            if (interactive || spec.tty()) {
                exec.pumpStdin(stdin);
            } else {
                exec.send(new Message.Eof(ExecChannel.CH, Message.Stream.STDIN));
            }
            return exec.await(new java.io.FileOutputStream(java.io.FileDescriptor.out),
                    new java.io.FileOutputStream(java.io.FileDescriptor.err), null);
        } finally {
            restore.run();
        }
    }
}
