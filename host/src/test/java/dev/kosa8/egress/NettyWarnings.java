package dev.kosa8.egress;

import io.netty.util.ResourceLeakDetector;
import java.util.Queue;
import java.util.function.Predicate;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * What Netty reports going wrong while a test class runs: every record of WARNING or worse in its log (an exception
 * that reached the end of a pipeline unhandled, a leaked buffer) is added to the test's queue of problems, with the
 * leak detector at PARANOID (every buffer tracked, so a leak gets logged) until {@link #close()} puts the level back
 * and stops listening. The tests then assert that the queue is empty.
 */
final class NettyWarnings implements AutoCloseable {
    /** Held here: java.util.logging keeps loggers weakly, and a logger collected loses its handler. */
    private static final Logger NETTY_LOG = Logger.getLogger("io.netty");

    private final Handler handler;
    private final ResourceLeakDetector.Level previousLeakLevel;

    private NettyWarnings(Handler handler) {
        this.handler = handler;
        NETTY_LOG.addHandler(handler);
        previousLeakLevel = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    }

    /** Adds Netty's warnings to {@code problems}, each as its logger, message and exception. */
    static NettyWarnings into(Queue<String> problems) {
        return into(problems, r -> false);
    }

    /** The same, leaving out the records {@code ignored} matches. */
    static NettyWarnings into(Queue<String> problems, Predicate<LogRecord> ignored) {
        return new NettyWarnings(new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.WARNING.intValue() && !ignored.test(r)) {
                    problems.add(r.getLoggerName() + ": " + r.getMessage() + (r.getThrown() == null ? ""
                            : " " + r.getThrown()));
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        });
    }

    @Override
    public void close() {
        NETTY_LOG.removeHandler(handler);
        ResourceLeakDetector.setLevel(previousLeakLevel);
    }
}
