package dev.kosa8.image.debian;

import dev.kosa8.host.KosaException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Example;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DebianVersionTest {

    @Example
    void policyExamples() {
        assertThat(cmp("1.0~rc1", "1.0")).isNegative();
        assertThat(cmp("1.0", "1.0+b1")).isNegative();
        assertThat(cmp("1:0.1", "2.0")).isPositive();
        assertThat(cmp("2.36-9+deb12u4", "2.36-9+deb12u10")).isNegative();
        assertThat(cmp("1.0", "1.0-0")).isZero();
        assertThat(cmp("1.00", "1.0")).isZero();
        assertThat(cmp("1.0a", "1.0")).isPositive();
        assertThat(cmp("1.0~", "1.0~~")).isPositive();
        assertThat(cmp("1.0a", "1.0+")).isNegative(); // letters sort before other characters
        assertThat(cmp("6.1.0-57", "6.1.0-9")).isPositive();
        assertThat(cmp("99999999999999999999999", "99999999999999999999998")).isPositive();
        assertThat(DebianVersion.parse("1:2.3-4-5")).isEqualTo(new DebianVersion(1, "2.3-4", "5"));
    }

    @Example
    void badVersionsAreRefused() {
        for (String bad : List.of("", "a1.0", "1.0-", ":1", "x:1", "1.0 2", "1_0", "1.0-a_b", "1234567890:1")) {
            assertThatThrownBy(() -> DebianVersion.parse(bad)).as(bad).isInstanceOf(KosaException.class);
        }
    }

    /** The order agrees with the host's dpkg ({@code dpkg --compare-versions}) on random versions. */
    @Property(tries = 150)
    void agreesWithDpkg(@ForAll("versions") String a, @ForAll("versions") String b) throws Exception {
        int ours = Integer.signum(cmp(a, b));
        int dpkg = dpkgLt(a, b) ? -1 : dpkgLt(b, a) ? 1 : 0;
        assertThat(ours).as(a + " vs " + b).isEqualTo(dpkg);
    }

    @Property(tries = 200)
    void isAnOrder(@ForAll("versions") String a, @ForAll("versions") String b, @ForAll("versions") String c) {
        assertThat(Integer.signum(cmp(a, b))).isEqualTo(-Integer.signum(cmp(b, a)));
        if (cmp(a, b) <= 0 && cmp(b, c) <= 0) {
            assertThat(cmp(a, c)).isNotPositive();
        }
        assertThat(cmp(a, DebianVersion.parse(a).toString())).isZero();
    }

    @Provide
    Arbitrary<String> versions() {
        // few characters, so that near-equal versions (where the order's corners are) come up often
        Arbitrary<String> part = Arbitraries.strings().withChars("0129a~+.Z").ofMinLength(0).ofMaxLength(6);
        Arbitrary<String> upstream = Combinators.combine(Arbitraries.strings().withChars("019").ofMinLength(1)
                .ofMaxLength(2), part).as(String::concat);
        Arbitrary<String> revision = Arbitraries.strings().withChars("01a~+.").ofMinLength(1).ofMaxLength(4);
        return Combinators.combine(Arbitraries.of("", "", "0:", "1:", "12:"), upstream,
                        revision.injectNull(0.4))
                .as((e, u, r) -> e + u + (r == null ? "" : "-" + r));
    }

    private static int cmp(String a, String b) {
        return DebianVersion.parse(a).compareTo(DebianVersion.parse(b));
    }

    private static boolean dpkgLt(String a, String b) throws Exception {
        Process p = new ProcessBuilder("dpkg", "--compare-versions", a, "lt", b).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        int rc = p.waitFor();
        if (rc > 1) {
            throw new IllegalStateException("dpkg --compare-versions " + a + " lt " + b + " exited " + rc);
        }
        return rc == 0;
    }
}
