package dev.kosa8.egress;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One allowed connection or request being carried: counts its bytes both
 * ways and writes its audit line exactly once, when it ends.
 */
final class Exchange {
    private final AuditLog audit;
    private final Listener listener;
    private final String host;
    private final int port;
    private final String method;
    private final String path;
    private final String address;
    private final String reason;
    private final long startNanos = System.nanoTime();
    private final AtomicLong out = new AtomicLong();
    private final AtomicLong in = new AtomicLong();
    private final AtomicBoolean ended = new AtomicBoolean();
    private volatile String outcome = "";
    private volatile String secret;

    Exchange(AuditLog audit, Listener listener, String host, int port, String method, String path, String address,
             String reason) {
        this.audit = audit;
        this.listener = listener;
        this.host = host;
        this.port = port;
        this.method = method;
        this.path = path;
        this.address = address;
        this.reason = reason;
    }

    void sent(long n) {
        out.addAndGet(n);
    }

    void received(long n) {
        in.addAndGet(n);
    }

    /** Appended to the reason, such as the upstream's HTTP status. */
    void outcome(String s) {
        outcome = s;
    }

    /** The names of the secrets put into this request (or learned from its answer), for the audit line; added up. */
    void secret(String names) {
        secret = secret == null ? names : secret + "," + names;
    }

    void end() {
        if (ended.compareAndSet(false, true)) {
            long ms = Duration.ofNanos(System.nanoTime() - startNanos).toMillis();
            audit.write(new AuditEvent(Instant.now(), listener.label(), host, port, method, path, address, "allow",
                    outcome.isEmpty() ? reason : reason + "; " + outcome, out.get(), in.get(), ms, secret));
        }
    }
}
