package dev.kosa8.egress;

import dev.kosa8.secrets.KeyScrubber;
import dev.kosa8.secrets.SentinelDetector;
import io.netty.handler.codec.http.FullHttpRequest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The secrets of one running sandbox, as its broker applies them: which
 * requests get a real key, which carry a placeholder where it must not go,
 * and what to take out of responses. A value: granting or revoking a secret
 * swaps in a new one ({@link Broker#secrets(SecretBindings)}).
 *
 * <p>Where the broker looks. Every request it parses: plain HTTP on either
 * port, and requests inside TLS it intercepts, which are the bound hosts' and
 * those with method or path rules. TLS to other allowed hosts is passed
 * through unread, so a placeholder sent there is not seen; it is worth nothing
 * there either, since only this broker turns it into the key, and only on the
 * way to the key's own host.
 */
public final class SecretBindings {
    public static final SecretBindings NONE = new SecretBindings(List.of());

    private final List<SecretBinding> all;
    private final KeyScrubber scrubber;
    /**
     * The placeholders that may not go somewhere, as one detector: all of them
     * ("*"), or all but those bound to one host and port, reached over TLS
     * ("host:port"). Keyed so: under {@code --net open} the guest names any
     * number of hosts, and this must not grow with them.
     */
    private final Map<String, Optional<SentinelDetector>> misplaced = new ConcurrentHashMap<>();

    public SecretBindings(List<SecretBinding> all) {
        this.all = List.copyOf(all);
        Map<String, String> pairs = new LinkedHashMap<>();
        for (SecretBinding b : this.all) {
            pairs.put(b.value(), b.standIn());
        }
        this.scrubber = pairs.isEmpty() ? null : KeyScrubber.of(pairs);
    }

    public List<SecretBinding> all() {
        return all;
    }

    /** These and {@code more} (an OAuth login's tokens, {@link OAuthLogins}). */
    SecretBindings with(List<SecretBinding> more) {
        if (more.isEmpty()) {
            return this;
        }
        List<SecretBinding> both = new ArrayList<>(all);
        both.addAll(more);
        return new SecretBindings(both);
    }

    public boolean isEmpty() {
        return all.isEmpty();
    }

    /** The secrets bound to this host and port. */
    List<SecretBinding> boundTo(String host, int port) {
        List<SecretBinding> r = new ArrayList<>();
        for (SecretBinding b : all) {
            if (b.boundTo(host, port)) {
                r.add(b);
            }
        }
        return r;
    }

    /**
     * The name of a secret whose placeholder this request carries (in its
     * target, a header or its body; raw, percent-encoded or base64) though it
     * may not go to {@code host:port} this way: to another host, or to its own
     * host over plain HTTP, where the broker never puts a key.
     */
    Optional<String> misplacedSentinel(FullHttpRequest req, String host, int port, boolean tls) {
        Optional<SentinelDetector> d = misplacedDetector(host, port, tls);
        if (d.isEmpty()) {
            return Optional.empty();
        }
        SentinelDetector detector = d.get();
        Optional<String> found = detector.find(req.uri());
        for (Map.Entry<String, String> h : req.headers()) {
            if (found.isPresent()) {
                break;
            }
            found = detector.find(h.getKey()).or(() -> detector.find(h.getValue()));
        }
        if (found.isEmpty()) {
            found = detector.find(req.content());
        }
        return found;
    }

    /**
     * The detector of the placeholders that may not go to {@code host:port} this way (over TLS or not); empty
     * when there are none. Plain HTTP's does not depend on the host: no placeholder may go there.
     */
    Optional<SentinelDetector> misplacedDetector(String host, int port, boolean tls) {
        boolean ownKeys = tls && !boundTo(host, port).isEmpty();
        return misplaced.computeIfAbsent(ownKeys ? host + ":" + port : "*", k -> {
            // a placeholder bound to several hosts (an OAuth access token and its provider's API hosts) is at home on
            // each of them
            java.util.Set<String> own = new java.util.HashSet<>();
            for (SecretBinding b : all) {
                if (ownKeys && b.boundTo(host, port)) {
                    own.add(b.sentinel());
                }
            }
            Map<String, String> foreign = new LinkedHashMap<>();
            for (SecretBinding b : all) {
                if (!own.contains(b.sentinel())) {
                    foreign.put(b.name(), b.sentinel());
                }
            }
            return foreign.isEmpty() ? Optional.empty() : Optional.of(new SentinelDetector(foreign));
        });
    }

    /** What replaces real keys in responses, or null when the sandbox holds no secret. */
    KeyScrubber scrubber() {
        return scrubber;
    }

    @Override
    public String toString() {
        return "SecretBindings" + all;
    }
}
