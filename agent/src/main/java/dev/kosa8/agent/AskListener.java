package dev.kosa8.agent;

import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.ProtocolException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Where guest programs ask for a turn checkpoint: TCP on the guest's own
 * loopback, {@value #PORT}, one line per connection, so that a hook needs
 * nothing but bash to ask ({@code kosa8-guest}, docs/agents.md). The line is
 * {@code checkpoint LABEL}; the answer is one line, {@code taken|refused|rewound|forgotten TEXT}, and the
 * connection closes. Any guest process may ask: they are all the guest, and
 * the host bounds what asking can cost.
 */
final class AskListener {
    static final int PORT = 7719;
    private static final int MAX_LINE = 1024;
    private static final int MAX_CLIENTS = 8;
    private static final int READ_TIMEOUT_MILLIS = 10_000;
    /** How long a client waits for the host: a checkpoint under TCG with the host busy can take a while. */
    private static final long ANSWER_TIMEOUT_SECONDS = 300;

    private final GuestAsks asks;
    private final Semaphore clients = new Semaphore(MAX_CLIENTS);

    AskListener(GuestAsks asks) {
        this.asks = asks;
    }

    /** Listens in the background; a guest without a loopback interface simply has no asks. */
    void start() {
        Thread.ofPlatform().daemon().name("asks").start(() -> {
            try (ServerSocket server = new ServerSocket(PORT, 16, InetAddress.getLoopbackAddress())) {
                while (true) {
                    Socket s = server.accept();
                    if (!clients.tryAcquire()) {
                        answer(s, "refused too many programs are asking at once");
                        continue;
                    }
                    Thread.ofVirtual().start(() -> {
                        try {
                            serve(s);
                        } finally {
                            clients.release();
                        }
                    });
                }
            } catch (IOException e) {
                Log.info("turn checkpoints cannot be asked for: " + e.getMessage());
            }
        });
    }

    private void serve(Socket s) {
        try (s) {
            s.setSoTimeout(READ_TIMEOUT_MILLIS);
            String line = readLine(s.getInputStream());
            answer(s, handle(line));
        } catch (SocketTimeoutException e) {
            answer(s, "refused no request line within " + READ_TIMEOUT_MILLIS / 1000 + " s");
        } catch (IOException e) {
            // the client went away: nothing to answer
        }
    }

    /** The answer line to one request line. */
    String handle(String line) {
        if (line == null) {
            return "refused the request is longer than " + MAX_LINE + " bytes or not UTF-8";
        }
        if (!(line.equals("checkpoint") || line.startsWith("checkpoint "))) {
            return "refused unknown request; the only one is: checkpoint LABEL";
        }
        String label = line.length() > "checkpoint ".length() ? line.substring("checkpoint ".length()) : "";
        try {
            new Message.Ask(1, label); // checks the label as the host will
        } catch (ProtocolException e) {
            return "refused the label " + e.getMessage() + " (at most " + Limits.MAX_LABEL + " bytes, one line)";
        }
        Message.Answer a;
        try {
            a = asks.ask(label).get(ANSWER_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            return "forgotten the host did not answer within " + ANSWER_TIMEOUT_SECONDS + " s";
        } catch (InterruptedException | java.util.concurrent.ExecutionException e) {
            return "forgotten " + e;
        }
        return a.outcome().name().toLowerCase(java.util.Locale.ROOT) + " " + a.text().replace('\n', ' ');
    }

    private static void answer(Socket s, String line) {
        try {
            OutputStream out = s.getOutputStream();
            out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            s.close();
        } catch (IOException e) {
            // the client went away
        }
    }

    /** One line without its newline, or null when it is too long or not UTF-8. */
    static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0 && c != '\n') {
            if (b.size() >= MAX_LINE) {
                return null;
            }
            b.write(c);
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(b.toByteArray())).toString();
        } catch (java.nio.charset.CharacterCodingException e) {
            return null;
        }
    }
}
