package dev.kosa8.daemon;

import dev.kosa8.egress.EgressService;
import dev.kosa8.host.FileTrees;
import dev.kosa8.vm.GuestCommand;
import dev.kosa8.vm.Vm;
import dev.kosa8.vm.VmSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * What a template's guest goes through before it is saved ({@link Templates}), so that every sandbox made from it
 * starts with an agent that has run, and compiled, what each sandbox runs at once: the wake of a restore
 * ({@link #restore}) and, with a network, a download through its link ({@link #network}).
 */
final class TemplateRehearsals {
    private final EgressService egress;
    private final Consumer<String> log;

    /** @param egress where a template with a network rehearses its downloads; null: it does not */
    TemplateRehearsals(EgressService egress, Consumer<String> log) {
        this.egress = egress;
        this.log = log;
    }

    /** Whether templates with a network rehearse their downloads here. */
    boolean ofNetwork() {
        return egress != null;
    }

    /**
     * Runs the agent's part of a checkpoint and of a restore {@value #REHEARSALS} times before the template is
     * saved: a freeze, a second Hello on the same connection (what the agent of a restored machine reads: its new
     * host, in the session the state was saved in), then a thaw with the clock set to now and 64 fresh host bytes
     * mixed into the guest's random pool, as every restore does. Every sandbox of the shape starts from the agent's
     * JVM as the template saved it, and what that JVM does on a wake is paid in each restore, under TCG by a fresh
     * QEMU that translates every code path anew:
     * <ul>
     * <li>code it never ran is loaded, linked and interpreted for the first time: a create's thaw took 1.1-2.4 s
     *     before the first rehearsal, against 0.04-0.15 s for a sandbox that had thawed before
     *     (bench/history/undo.md, run 14);</li>
     * <li>code it ran fewer times than its JIT's threshold is compiled on the wake itself, when the restore's own
     *     calls pass the threshold: with one rehearsal every rewind's wake ran C1 (5-30% of the guest code it
     *     translated was the compiler's, a quarter of a create's). C1 compiles a method once the interpreter
     *     has counted about 256 calls (Tier3InvocationThreshold 200, counted in steps of
     *     2^Tier0InvokeNotifyFreqLog = 128), so
     *     {@value #REHEARSALS} passes leave every method of the wake compiled, in the template and in every
     *     checkpoint of its sandboxes (bench/history/undo.md, run 15).</li>
     * </ul>
     * It costs 10-20 ms a pass under TCG, 3-7 s more to make each template. The clock and seed are what each
     * restore sets again; the sandbox cgroup is empty at this point, so the freeze waits for nothing.
     */
    static void restore(Vm vm) {
        byte[] seed = new byte[64];
        for (int i = 0; i < REHEARSALS; i++) {
            GuestCommand.freeze(vm.agent(), Duration.ofSeconds(30));
            vm.agent().helloAgain(Duration.ofSeconds(30));
            RANDOM.nextBytes(seed);
            GuestCommand.thaw(vm.agent(), System.currentTimeMillis(), seed, Duration.ofSeconds(60));
        }
    }

    /**
     * Moves {@value #NET_REHEARSALS} downloads of {@value #NET_REHEARSAL_MIB} MiB through the template's network
     * link before it is saved ({@link dev.kosa8.egress.NetRehearsal}: a link whose HTTP listener answers every
     * request with zeros; nothing leaves the host), fetched by the guest's curl or wget, so
     * every sandbox of the shape starts with an agent that has compiled its network path. A fresh sandbox's first
     * download otherwise ran at half the speed of later ones under TCG (docs/network.md, "Throughput"). A
     * rehearsal that cannot run is logged and the template is made without it.
     *
     * @return the downloads that completed
     */
    int network(Vm vm, VmSpec spec, Path sockets) {
        if (egress == null || spec.netSocket() == null) {
            return 0;
        }
        long t0 = System.nanoTime();
        long deadline = t0 + NET_REHEARSAL_LIMIT.toNanos();
        int done = 0;
        try (var r = egress.rehearse(sockets, NET_REHEARSAL_MIB << 20, spec.netSocket(), spec.netWindow())) {
            if (!r.awaitLinked(Duration.ofSeconds(30))) {
                log.accept("template: its agent did not answer on the network link; made without a network rehearsal");
                return 0;
            }
            for (; done < NET_REHEARSALS; done++) {
                Duration left = Duration.ofNanos(deadline - System.nanoTime());
                if (left.toSeconds() < 1) {
                    log.accept("template: the network rehearsal took its " + NET_REHEARSAL_LIMIT.toSeconds()
                            + " s; made after " + done + " of " + NET_REHEARSALS + " downloads");
                    break;
                }
                var result = GuestCommand.run(vm.agent(), List.of("sh", "-c", FETCH, "kosa8-rehearsal", r.url()),
                        left);
                if (result.exitCode() != 0) {
                    log.accept("template: a rehearsal download failed (exit " + result.exitCode() + ": "
                            + shown(result.stderr()) + "); made after " + done + " of " + NET_REHEARSALS);
                    break;
                }
            }
            log.accept("template: rehearsed " + done + " downloads (" + (r.served() >> 20) + " MiB) in "
                    + Duration.ofNanos(System.nanoTime() - t0).toMillis() + " ms");
        } catch (RuntimeException e) {
            log.accept("template: the network rehearsal stopped (" + e.getMessage() + "); made after " + done);
        } finally {
            try {
                FileTrees.delete(sockets);
            } catch (IOException e) {
                log.accept("template: cannot remove " + sockets + ": " + e.getMessage());
            }
        }
        return done;
    }

    /** What a guest program said, for the daemon's log: its first 200 characters, control characters escaped. */
    private static String shown(String guestText) {
        String s = guestText.strip();
        s = s.length() > 200 ? s.substring(0, 200) + "…" : s;
        StringBuilder b = new StringBuilder();
        s.codePoints().forEach(c -> b.append(Character.isISOControl(c) ? String.format("\\u%04x", c)
                : Character.toString(c)));
        return b.toString();
    }

    /** The most a template's network rehearsal may take, all downloads together. */
    static final Duration NET_REHEARSAL_LIMIT = Duration.ofMinutes(3);

    /**
     * Fetches {@code $1} to nowhere with the image's curl or wget, else the busybox an imported image's guest has
     * from kosa8; 127 when there is none of them.
     */
    private static final String FETCH = "if command -v curl >/dev/null; then "
            + "exec curl -sS --noproxy '*' -o /dev/null \"$1\"; "
            + "elif command -v wget >/dev/null; then exec wget -q -O /dev/null \"$1\"; "
            + "elif [ -x /run/kosa8/busybox ]; then exec /run/kosa8/busybox wget -q -O /dev/null \"$1\"; "
            + "else echo 'no curl or wget' >&2; exit 127; fi";

    /** Downloads a template's network rehearsal makes, and the size of each (see {@link #network}). */
    static final int NET_REHEARSALS = 6;
    static final long NET_REHEARSAL_MIB = 50;

    /** How many times a template rehearses a checkpoint and a restore (see {@link #restore}). */
    static final int REHEARSALS = 300;

    private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();
}
