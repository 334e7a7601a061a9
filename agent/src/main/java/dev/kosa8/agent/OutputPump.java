package dev.kosa8.agent;

import dev.kosa8.protocol.Limits;
import dev.kosa8.protocol.Message;
import dev.kosa8.protocol.SendWindow;
import java.io.IOException;
import java.util.concurrent.CountDownLatch;

/**
 * Streams one output of a channel (stdout or stderr) to the host, never more
 * than the host's credit allows, then sends Eof.
 */
final class OutputPump {
    interface Source {
        /** Reads up to {@code max} bytes; an empty array at end of stream. */
        byte[] read(int max) throws IOException;
    }

    private final SendWindow window;
    private final CountDownLatch done = new CountDownLatch(1);

    OutputPump(int channel, Message.Stream stream, Outbox outbox, Source source, boolean platformThread) {
        this(channel, stream, outbox, source, platformThread, Limits.INITIAL_WINDOW, Limits.MAX_DATA);
    }

    /** @param window the stream's window ({@link Limits#INITIAL_WINDOW} for an exec's); {@code chunk}: the most per Data */
    OutputPump(int channel, Message.Stream stream, Outbox outbox, Source source, boolean platformThread, int window,
               int chunk) {
        this.window = new SendWindow(window);
        Runnable body = () -> {
            try {
                while (true) {
                    int allowed = this.window.acquire(chunk);
                    if (allowed < 0) {
                        break;
                    }
                    byte[] bytes = source.read(allowed);
                    if (bytes.length < allowed) {
                        // return the window we did not use
                        int unused = allowed - bytes.length;
                        this.window.credit(unused);
                    }
                    if (bytes.length == 0) {
                        break;
                    }
                    if (!outbox.send(new Message.Data(channel, stream, bytes))) {
                        break;
                    }
                }
                outbox.send(new Message.Eof(channel, stream));
            } catch (IOException e) {
                outbox.send(new Message.Eof(channel, stream));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                done.countDown();
            }
        };
        // Pipes and PTYs are read by blocking native calls, which pin a virtual thread's carrier;
        // with two carriers (two vCPUs) two pinned readers would starve every other virtual thread.
        (platformThread ? Thread.ofPlatform().daemon() : Thread.ofVirtual()).name(stream + "-" + channel).start(body);
    }

    void credit(int bytes) {
        window.credit(bytes);
    }

    void close() {
        window.close();
    }

    void awaitDone() throws InterruptedException {
        done.await();
    }

    boolean awaitDone(long millis) throws InterruptedException {
        return done.await(millis, java.util.concurrent.TimeUnit.MILLISECONDS);
    }
}
