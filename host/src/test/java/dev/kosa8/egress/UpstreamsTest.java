package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * How a failed lookup is told apart: a rule's refusal (a 403 without the allow hint) from the outside world's
 * failure (a 502), whichever way the failure reaches an entry point.
 */
class UpstreamsTest {

    @Test
    void aNameTheResolverDoesNotKnowIsTheOutsideWorldsFailureAndSaysTheResolversAnswer() {
        Upstreams up = new Upstreams(h -> {
            throw new UnknownHostException(h + ": Name or service not known");
        }, EgressTestSettings.NONE);
        Upstreams.Refused r = catchThrowableOfType(Upstreams.Refused.class, () -> up.resolve("typo.test", 443));
        assertThat(r.unresolved()).isTrue();
        assertThat(r).hasMessage("typo.test does not resolve (Name or service not known)");
    }

    @Test
    void aNameResolvingOnlyToRefusedAddressesIsARulesRefusal() throws Exception {
        InetAddress loopback = InetAddress.getByAddress("rebind.test", new byte[] {127, 0, 0, 1});
        InetAddress metadata = InetAddress.getByAddress("rebind.test", new byte[] {(byte) 169, (byte) 254, (byte) 169,
                (byte) 254});
        Upstreams up = new Upstreams(h -> new InetAddress[] {loopback, metadata}, EgressTestSettings.NONE);
        Upstreams.Refused r = catchThrowableOfType(Upstreams.Refused.class, () -> up.resolve("rebind.test", 443));
        assertThat(r.unresolved()).isFalse();
        assertThat(r.getMessage()).startsWith("rebind.test resolves only to addresses the broker refuses: 127.0.0.1")
                .contains("169.254.169.254");
    }

    @Test
    void anAsyncFailureIsUnwrappedToTheSameRefusal() {
        Upstreams up = new Upstreams(h -> {
            throw new UnknownHostException(h);
        }, EgressTestSettings.NONE);
        Throwable failure = catchThrowableOfType(CompletionException.class,
                () -> up.resolveAsync("gone.test", 80, EgressPolicy.DENY_ALL).join());
        Upstreams.Refused r = Upstreams.refusal(failure);
        assertThat(r.unresolved()).isTrue();
        assertThat(r).hasMessage("gone.test does not resolve");
    }

    @Test
    void aLookupThatFailsAnyOtherWayIsTheOutsideWorldsFailureNotARule() {
        Upstreams up = new Upstreams(h -> {
            throw new IllegalStateException("resolver crashed");
        }, EgressTestSettings.NONE);
        Throwable failure = catchThrowableOfType(CompletionException.class,
                () -> up.resolveAsync("odd.test", 80, EgressPolicy.DENY_ALL).join());
        Upstreams.Refused r = Upstreams.refusal(failure);
        assertThat(r.unresolved()).isTrue();
        assertThat(r.getMessage()).isEqualTo(
                "looking up the name failed: java.lang.IllegalStateException: resolver crashed");
        io.netty.handler.codec.http.FullHttpResponse answer = Denials.unreachable("sbx", r);
        try {
            assertThat(answer.status().code()).isEqualTo(502);
            assertThat(answer.headers().get("X-Kosa8-Error")).isEqualTo("upstream");
        } finally {
            answer.release();
        }
    }
}
