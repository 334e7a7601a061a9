package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import dev.kosa8.net.HostName;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The policy as a pure function, the address check, and the rule syntax users write. */
class EgressPolicyTest {

    static EgressPolicy policy(String... rules) {
        return new EgressPolicy(false, List.of(rules).stream().map(AllowRule::parse).toList());
    }

    @Test
    void denyIsTheDefaultAndEveryDenialSaysWhy() {
        Decision d = EgressPolicy.DENY_ALL.connect("pypi.org", 443);
        assertThat(d.allowed()).isFalse();
        assertThat(d.reason()).isEqualTo("pypi.org:443 is not on the sandbox's allow-list");
        assertThat(EgressPolicy.DENY_ALL.answers("pypi.org")).isFalse();
    }

    @Test
    void aNameWithoutAPortCoversTheWebsTwoPortsOnly() {
        EgressPolicy p = policy("pypi.org");
        assertThat(p.connect("pypi.org", 443).allowed()).isTrue();
        assertThat(p.connect("pypi.org", 80).allowed()).isTrue();
        assertThat(p.connect("pypi.org", 22).allowed()).isFalse();
        assertThat(p.connect("evil-pypi.org", 443).allowed()).isFalse();
        assertThat(p.connect("x.pypi.org", 443).allowed()).isFalse();
        assertThat(policy("git.example.com:2222").connect("git.example.com", 2222).allowed()).isTrue();
        assertThat(policy("git.example.com:2222").connect("git.example.com", 443).allowed()).isFalse();
    }

    @Test
    void aWildcardCoversNamesBelowItButNotItselfNorLookAlikes() {
        EgressPolicy p = policy("*.githubusercontent.com");
        assertThat(p.connect("raw.githubusercontent.com", 443).allowed()).isTrue();
        assertThat(p.connect("a.b.githubusercontent.com", 443).allowed()).isTrue();
        assertThat(p.connect("githubusercontent.com", 443).allowed()).isFalse();
        assertThat(p.connect("evilgithubusercontent.com", 443).allowed()).isFalse();
        assertThat(p.answers("raw.githubusercontent.com")).isTrue();
        assertThat(p.answers("githubusercontent.com")).isFalse();
    }

    @Test
    void methodAndPathRulesNeedInterceptionAndJudgeEachRequest() {
        EgressPolicy p = policy("GET,HEAD pypi.org/simple/");
        Decision c = p.connect("pypi.org", 443);
        assertThat(c.allowed()).isTrue();
        assertThat(c.intercept()).isTrue();
        assertThat(c.requestRules()).isTrue();
        assertThat(p.request("pypi.org", 443, "GET", "/simple/requests/").allowed()).isTrue();
        assertThat(p.request("pypi.org", 443, "POST", "/simple/requests/").allowed()).isFalse();
        assertThat(p.request("pypi.org", 443, "GET", "/upload").reason())
                .isEqualTo("GET /upload on pypi.org is outside the rules GET,HEAD pypi.org/simple/");
        // an unrestricted rule for the same host wins: no request rule judges it (it is still intercepted, as
        // every host is, for the Host check)
        assertThat(policy("GET pypi.org/simple/", "pypi.org").connect("pypi.org", 443).requestRules()).isFalse();
    }

    @Test
    void everyAllowedHostIsInterceptedUnlessARuleNamesItPassthrough() {
        Decision plain = policy("pypi.org").connect("pypi.org", 443);
        assertThat(plain.intercept()).isTrue();
        assertThat(plain.passthrough()).isFalse();
        assertThat(new EgressPolicy(true, List.of()).connect("any.example", 443).intercept()).isTrue();

        EgressPolicy p = policy("passthrough pins.example", "GET pins.example/x", "passthrough *.cdn.example");
        Decision pass = p.connect("pins.example", 443);
        assertThat(pass.allowed()).isTrue();
        assertThat(pass.passthrough()).isTrue();
        assertThat(pass.intercept()).isFalse();
        assertThat(pass.reason()).isEqualTo("allowed by passthrough pins.example");
        // the passthrough rule wins over a rule with methods for the same host, as an unrestricted rule does
        assertThat(p.request("pins.example", 443, "POST", "/y").allowed()).isTrue();
        assertThat(p.connect("a.cdn.example", 443).passthrough()).isTrue();
        assertThat(p.connect("cdn.example", 443).allowed()).isFalse();
        // under --net open a passthrough rule still marks its host
        EgressPolicy open = new EgressPolicy(true, List.of(AllowRule.parse("passthrough pins.example")));
        assertThat(open.connect("pins.example", 443).passthrough()).isTrue();
        assertThat(open.connect("other.example", 443).passthrough()).isFalse();
    }

    @Test
    void aPassthroughRuleIsWrittenWithItsWordAndHasNoMethodsOrPath() {
        AllowRule r = AllowRule.parse("PassThrough Pins.Example:8443");
        assertThat(r.passthrough()).isTrue();
        assertThat(r.toString()).isEqualTo("passthrough pins.example:8443");
        assertThat(AllowRule.parse(r.toString())).isEqualTo(r);
        assertThatThrownBy(() -> AllowRule.parse("passthrough GET pins.example")).hasMessageContaining("never read");
        assertThatThrownBy(() -> AllowRule.parse("passthrough pins.example/x")).hasMessageContaining("never read");
        // denying the host takes its passthrough rule off the list too
        assertThat(policy("passthrough pins.example", "pypi.org").denying(HostPattern.parse("pins.example")).rules())
                .extracting(Object::toString).containsExactly("pypi.org");
        assertThat(NetPresets.load(Path.of("/nonexistent/presets.json")).expand(List.of("passthrough @pypi")).stream()
                .map(Object::toString)).containsExactly("passthrough pypi.org", "passthrough files.pythonhosted.org");
    }

    @Test
    void openAllowsEveryHostButStillNamesIt() {
        EgressPolicy open = new EgressPolicy(true, List.of());
        Decision d = open.connect("anything.example", 8443);
        assertThat(d.allowed()).isTrue();
        assertThat(d.reason()).isEqualTo("the network is open"); // what the audit line of each connection says
        assertThat(open.answers("anything.example")).isTrue();
    }

    @Test
    void allowingAndDenyingChangeTheListAndNothingElse() {
        EgressPolicy p = policy("pypi.org", "*.npmjs.org");
        EgressPolicy q = p.allowing(AllowRule.parse("pypi.org")).denying(HostPattern.parse("*.npmjs.org"));
        assertThat(q.rules()).extracting(Object::toString).containsExactly("pypi.org");
        assertThat(p.rules()).hasSize(2); // a value: the old policy is unchanged
    }

    @Test
    void badRulesAreRefusedWithTheReason() {
        assertThatThrownBy(() -> AllowRule.parse("1.2.3.4")).hasMessageContaining("is an IP address");
        assertThatThrownBy(() -> AllowRule.parse("*.com")).hasMessageContaining("top-level domain");
        assertThatThrownBy(() -> AllowRule.parse("a*b.com")).hasMessageContaining("not a host name");
        assertThatThrownBy(() -> AllowRule.parse("pypi.org:99999")).hasMessageContaining("port out of range");
        assertThatThrownBy(() -> AllowRule.parse("G3T pypi.org")).hasMessageContaining("not an HTTP method");
        assertThatThrownBy(() -> AllowRule.parse("GET pypi.org:x")).hasMessageContaining("bad port");
        assertThat(AllowRule.parse("get,head pypi.org/simple/").toString()).isEqualTo("GET,HEAD pypi.org/simple/");
    }

    @Test
    void presetsExpandAndAUsersFileAddsOrReplacesThem(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("presets.json"), "{\"work\": [\"git.corp.example\"], "
                + "\"pypi\": [\"pypi.mirror.example\"]}");
        NetPresets presets = NetPresets.load(file);
        assertThat(presets.expand(List.of("@work", "@pypi", "@npm")).stream().map(Object::toString))
                .containsExactly("git.corp.example", "pypi.mirror.example", "registry.npmjs.org", "registry.yarnpkg.com");
        assertThatThrownBy(() -> presets.expand(List.of("@nope"))).isInstanceOf(KosaException.class)
                .hasMessageContaining("no network preset '@nope'");
        assertThat(NetPresets.load(dir.resolve("missing.json")).all()).isEqualTo(NetPresets.BUILT_IN);
    }

    @Test
    void theAddressCheckRefusesEveryNonPublicRangeInEveryDisguise() throws Exception {
        for (String a : List.of("127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
                "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "198.18.0.1", "::1",
                "::", "fe80::1", "fd00:ec2::254", "fc00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
                "64:ff9b::a9fe:a9fe", "::127.0.0.1")) {
            assertThat(AddressFilter.refusal(InetAddress.getByName(a))).as(a).isNotNull();
        }
        for (String a : List.of("93.184.216.34", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111")) {
            assertThat(AddressFilter.refusal(InetAddress.getByName(a))).as(a).isNull();
        }
    }

    @Test
    void aNameResolvingToAnAddressOfThisHostIsRefusedEvenWhenThatAddressIsPublic() throws Exception {
        // the host's own addresses reach whatever listens on them, public or not
        InetAddress own = java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces()).stream()
                .flatMap(i -> java.util.Collections.list(i.getInetAddresses()).stream())
                .filter(a -> !a.isLoopbackAddress() && !a.isLinkLocalAddress()).findFirst().orElse(null);
        org.junit.jupiter.api.Assumptions.assumeTrue(own != null, "this machine has no non-loopback address");
        Upstreams u = new Upstreams(h -> new InetAddress[] {own}, EgressTestSettings.NONE);
        assertThatThrownBy(() -> u.resolve("self.example", 443)).isInstanceOf(Upstreams.Refused.class)
                .hasMessageContaining(own.getHostAddress() + " (an address of this host)");
        Upstreams pub = new Upstreams(h -> new InetAddress[] {InetAddress.getByName("1.1.1.1")}, EgressTestSettings.NONE);
        assertThat(pub.resolve("one.example", 443).address().getAddress().getHostAddress()).isEqualTo("1.1.1.1");
    }

    @Test
    void anAddressExceptionLetsItsNamesBeDialedInItsBlocksAndSaysSoButNothingElse() throws Exception {
        EgressPolicy plain = policy("deb.debian.org", "example.org");
        EgressPolicy excepted = plain.withExceptions(new AddressExceptions(List.of(
                AddressException.parse("deb.debian.org", List.of("203.0.113.0/24")))));
        InetAddress mirror = InetAddress.getByName("203.0.113.80");

        assertThat(plain.address("deb.debian.org", mirror, false)).isEqualTo(Decision.deny("documentation range"));
        Decision d = excepted.address("deb.debian.org", mirror, false);
        assertThat(d.allowed()).isTrue();
        assertThat(d.reason()).isEqualTo("203.0.113.80 is documentation range, dialed by the address exception "
                + "deb.debian.org -> 203.0.113.0/24");
        // another name, another block, this host's own address: refused as without the exception
        assertThat(excepted.address("example.org", mirror, false).allowed()).isFalse();
        assertThat(excepted.address("deb.debian.org", InetAddress.getByName("127.0.0.1"), false).allowed()).isFalse();
        assertThat(excepted.address("deb.debian.org", mirror, true)).isEqualTo(Decision.deny("an address of this host"));
        assertThat(excepted.address("deb.debian.org", InetAddress.getByName("1.1.1.1"), false))
                .isEqualTo(Decision.allow("a public address"));
        // it allows no host: the allow-list still decides, and changes to it keep the exceptions
        assertThat(excepted.withExceptions(excepted.exceptions()).connect("other.example", 443).allowed()).isFalse();
        assertThat(excepted.allowing(AllowRule.parse("x.example")).exceptions()).isEqualTo(excepted.exceptions());
        assertThat(excepted.denying(HostPattern.parse("example.org")).exceptions()).isEqualTo(excepted.exceptions());
    }

    @Test
    void theResolverDialsAnExceptedAddressAndNamesTheExceptionForTheAuditLine() throws Exception {
        InetAddress mirror = InetAddress.getByName("203.0.113.80");
        Upstreams u = new Upstreams(h -> new InetAddress[] {mirror}, EgressTestSettings.NONE);
        EgressPolicy p = policy("deb.debian.org").withExceptions(new AddressExceptions(List.of(
                AddressException.parse("deb.debian.org", List.of("203.0.113.0/24")))));
        assertThatThrownBy(() -> u.resolve("deb.debian.org", 80)).isInstanceOf(Upstreams.Refused.class)
                .hasMessage("deb.debian.org resolves only to addresses the broker refuses: 203.0.113.80 "
                        + "(documentation range)");
        Upstreams.Target t = u.resolve("deb.debian.org", 80, p);
        assertThat(t.address().getAddress()).isEqualTo(mirror);
        assertThat(t.reason("allowed by deb.debian.org")).isEqualTo("allowed by deb.debian.org; 203.0.113.80 is "
                + "documentation range, dialed by the address exception deb.debian.org -> 203.0.113.0/24");
        Upstreams pub = new Upstreams(h -> new InetAddress[] {InetAddress.getByName("1.1.1.1")}, EgressTestSettings.NONE);
        assertThat(pub.resolve("deb.debian.org", 80, p).reason("allowed by deb.debian.org"))
                .as("a public address needs no exception and the line says none").isEqualTo("allowed by deb.debian.org");
    }

    @Test
    void hostNamesAreNormalizedAndLiteralsAreNotNames() {
        assertThat(HostName.normalize("PyPI.org.")).isEqualTo("pypi.org");
        assertThat(HostName.normalize("1.2.3.4")).isNull();
        assertThat(HostName.normalize("a..b")).isNull();
        assertThat(HostName.normalize("-a.com")).isNull();
        assertThat(HostName.normalize("a".repeat(64) + ".com")).isNull();
        assertThat(HostName.isAddressLiteral("[::1]")).isTrue();
        assertThat(Authority.parse("api.test:8443", 443)).isEqualTo(new Authority("api.test", 8443, false));
        assertThat(Authority.parse("user@api.test", 443)).isNull();
        assertThat(Authority.parse("api.test:99999", 443)).isNull();
    }
}
