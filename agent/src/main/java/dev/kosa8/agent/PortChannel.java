package dev.kosa8.agent;

import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.PortLink;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;

/**
 * One connection to a published port ({@link PortLink}): the host accepted it
 * on its side, and the agent connects to the port on the guest's loopback and
 * carries the bytes both ways, stdin into the guest's socket and the socket's
 * bytes back as stdout. The agent only ever connects inward, to the guest's
 * own loopback, at the host's request; nothing here reaches out of the guest.
 *
 * <p>The connect runs on a thread of its own, so a service slow to accept holds
 * up only its own stream. The host's bytes that come before it are queued
 * within the stream's window ({@link StdinPump}). The stream ends with Exited
 * once both ways are over, or Failed when nothing accepted or the guest's side
 * broke; a Signal from the host, or the host going, resets the connection.
 */
final class PortChannel implements Channel {
    private final int channel;
    private final int port;
    private final Outbox outbox;
    private final CompletableFuture<Socket> socket = new CompletableFuture<>();
    private final StdinPump down;
    private final CountDownLatch downClosed = new CountDownLatch(1);
    private volatile OutputPump up;
    private volatile IOException broken;
    private volatile boolean reset;

    private PortChannel(int channel, int port, Outbox outbox) {
        this.channel = channel;
        this.port = port;
        this.outbox = outbox;
        this.down = new StdinPump(channel, outbox, new StdinPump.Sink() {
            @Override
            public void write(byte[] bytes) throws IOException {
                connected().getOutputStream().write(bytes);
            }

            @Override
            public void close() throws IOException {
                Socket s = connectedNow();
                if (s != null && !s.isClosed()) {
                    s.shutdownOutput();
                }
            }
        }, downClosed::countDown, PortLink.WINDOW, false);
        Thread.ofVirtual().name("port-" + channel).start(this::run);
    }

    static PortChannel start(Message.Connect c, Outbox outbox) {
        return new PortChannel(c.channel(), c.port(), outbox);
    }

    /** The socket if the connect succeeded, else null (not yet, or never). */
    private Socket connectedNow() {
        return socket.isDone() && !socket.isCompletedExceptionally() ? socket.join() : null;
    }

    private Socket connected() throws IOException {
        try {
            return socket.get();
        } catch (ExecutionException e) {
            throw new IOException("not connected", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        }
    }

    private void run() {
        try {
            Socket s;
            try {
                s = connect();
            } catch (IOException e) {
                socket.completeExceptionally(e);
                down.end();
                outbox.send(new Message.Failed(channel, Message.ErrorCode.NOT_FOUND, refusal(e)));
                return;
            }
            socket.complete(s);
            if (reset) {
                abort(s);
                return;
            }
            outbox.send(new Message.Started(channel, 0));
            InputStream in;
            try {
                in = s.getInputStream();
            } catch (IOException e) {
                broken = e;
                in = InputStream.nullInputStream();
            }
            InputStream source = in;
            up = new OutputPump(channel, Message.Stream.STDOUT, outbox, max -> {
                byte[] b = new byte[max];
                int n;
                try {
                    n = source.read(b);
                } catch (IOException e) {
                    broken = e;
                    throw e;
                }
                return n <= 0 ? new byte[0] : n == max ? b : java.util.Arrays.copyOf(b, n);
            }, false, PortLink.WINDOW, PortLink.CHUNK);
            up.awaitDone();
            downClosed.await();
            if (broken != null && !reset) {
                outbox.send(new Message.Failed(channel, Message.ErrorCode.INTERNAL,
                        "the connection to port " + port + " broke in the sandbox: " + broken.getMessage()));
            } else {
                outbox.send(new Message.Exited(channel, 0, 0));
            }
            try {
                s.close();
            } catch (IOException ignored) {
                // closed either way
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            outbox.done(channel);
        }
    }

    /** Connects to the port on the guest's loopback: IPv4's, then IPv6's when nothing accepts there. */
    private Socket connect() throws IOException {
        IOException first = null;
        for (String address : new String[] {PortLink.GUEST_ADDRESS, PortLink.GUEST_ADDRESS_V6}) {
            Socket s = new Socket();
            try {
                s.setTcpNoDelay(true);
                s.connect(new InetSocketAddress(address, port), PortLink.CONNECT_MILLIS);
                return s;
            } catch (IOException e) {
                s.close();
                if (first == null) {
                    first = e;
                }
                if (!(e instanceof ConnectException)) {
                    break; // a timeout: the service exists but does not accept, and a second wait tells nothing more
                }
            }
        }
        throw first;
    }

    private String refusal(IOException e) {
        if (e instanceof SocketTimeoutException) {
            return "port " + port + " in the sandbox did not accept the connection within "
                    + PortLink.CONNECT_MILLIS / 1000 + " s";
        }
        if (e instanceof ConnectException) {
            return "nothing listens on port " + port + " in the sandbox (on 127.0.0.1 or ::1)";
        }
        return "cannot connect to port " + port + " in the sandbox: " + e.getMessage();
    }

    /** Ends the connection at once with a reset (SO_LINGER 0): the guest's service sees ECONNRESET. */
    private void resetConnection() {
        reset = true;
        Socket s = connectedNow();
        if (s != null) {
            abort(s);
        }
        down.end();
        OutputPump u = up;
        if (u != null) {
            u.close();
        }
    }

    private static void abort(Socket s) {
        try {
            s.setSoLinger(true, 0);
        } catch (IOException ignored) {
            // closed as it is
        }
        try {
            s.close();
        } catch (IOException ignored) {
            // closed either way
        }
    }

    @Override
    public void onData(byte[] bytes) {
        down.offer(bytes);
    }

    @Override
    public void onEof() {
        down.end();
    }

    @Override
    public void onCredit(Message.Stream stream, int bytes) {
        OutputPump u = up;
        if (stream == Message.Stream.STDOUT && u != null) {
            u.credit(bytes);
        }
    }

    @Override
    public void onSignal(int signal) {
        resetConnection();
    }

    @Override
    public void onResize(int rows, int columns) {
        // not a terminal
    }

    @Override
    public void hangUp() {
        resetConnection();
    }
}
