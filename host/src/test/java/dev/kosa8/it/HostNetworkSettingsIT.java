package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The user's network settings against the real Debian mirror and npm registry, from a real guest. On the
 * machines these tests run on, both names resolve into 203.0.113.0/24 (a documentation range the broker refuses)
 * and their TLS is intercepted by a proxy whose CA the host trusts in /usr/local/share/ca-certificates: without
 * an address exception the broker refuses them, and without the host's CAs the guest refuses the proxy's
 * certificate. Each setting is shown to be what makes the difference.
 */
class HostNetworkSettingsIT {
    static final Duration T = Duration.ofMinutes(3);
    static final Path SETTINGS = Kosa.HOME.resolve("config").resolve("network.json");
    static final String NPM = "https://registry.npmjs.org/jq";

    @BeforeAll
    static void noSettingsYet() throws Exception {
        Files.deleteIfExists(SETTINGS);
    }

    @AfterAll
    static void removeSettings() throws Exception {
        Files.deleteIfExists(SETTINGS);
    }

    static void writeExceptions() throws Exception {
        Files.createDirectories(SETTINGS.getParent());
        Files.writeString(SETTINGS, """
                {"addressExceptions": {"deb.debian.org": ["203.0.113.0/24"],
                                       "security.debian.org": ["203.0.113.0/24"],
                                       "registry.npmjs.org": ["203.0.113.0/24"]}}
                """);
    }

    static Kosa.Result exec(String id, String... command) {
        String[] args = new String[command.length + 3];
        args[0] = "exec";
        args[1] = id;
        args[2] = "--";
        System.arraycopy(command, 0, args, 3, command.length);
        return Kosa.run(T, args);
    }

    /**
     * A folder holding kosa8's config directory is refused as a new sandbox's, kept or not, whatever its network,
     * before anything of the sandbox is made: no record is left to stop every broker after it (one once was, by
     * a refused `run` from a folder above the kosa8 home, and every sandbox then failed to start).
     */
    @Test
    void aFolderHoldingKosa8sSettingsIsRefusedBeforeAnySandboxIsMade() throws Exception {
        Path config = Files.createDirectories(Kosa.HOME.resolve("config"));
        Path data = Kosa.HOME.resolve("data");
        List<String> before = Kosa.ok(T, "ls", "-q").stdout().lines().toList();
        List<String> made = List.of();
        try {
            for (String[] line : List.of(new String[] {"create", "--workspace", config.toString()},
                    new String[] {"create", "--net", "none", "--workspace", config.toString()},
                    new String[] {"run", "--workspace", config.toString(), "--", "true"},
                    new String[] {"create", "--net", "none", "--workspace", data.toString()})) {
                Kosa.Result r = Kosa.run(T, line);
                assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
                assertThat(r.stderr()).as(r.toString()).contains("inside the folder the new sandbox would share")
                        .contains("--workspace");
            }
        } finally {
            made = Kosa.ok(T, "ls", "-q").stdout().lines().filter(id -> !before.contains(id)).toList();
            for (String id : made) { // one left would stop every broker after it
                Kosa.run(T, "rm", "-f", id);
            }
        }
        assertThat(made).as("no sandbox left behind").isEmpty();
    }

    @Test
    void aMirrorAtAReservedAddressIsReachedOnlyThroughAnExceptionAndItsTlsOnlyWithTheHostsCas() throws Exception {
        Files.deleteIfExists(SETTINGS);
        // passthrough: the guest itself sees the proxy's certificate, so the guest's trust decides; an intercepted
        // host's upstream is verified by the broker (the daemon's Java trust store, and the host's CAs when the
        // sandbox trusts them: docs/network.md)
        String id = Kosa.ok(Duration.ofMinutes(15), "create", "--workspace", "none", "--passthrough",
                "registry.npmjs.org").stdout().strip();
        try {
            Kosa.Result refused = exec(id, "curl", "-sS", "--max-time", "60", NPM);
            assertThat(refused.exitCode()).as(refused.toString()).isNotZero();
            assertThat(Kosa.ok(T, "net", "log", id).stdout())
                    .contains("registry.npmjs.org resolves only to addresses the broker refuses: 203.0.113");

            writeExceptions();
            assertThat(Kosa.ok(T, "net").stdout()).contains("registry.npmjs.org -> 203.0.113.0/24",
                    "deb.debian.org -> 203.0.113.0/24");
            Kosa.ok(T, "allow", id, "--passthrough", "registry.npmjs.org"); // a policy change reads the settings again
            Kosa.Result untrusted = exec(id, "curl", "-sS", "--max-time", "60", NPM);
            assertThat(untrusted.exitCode()).as("the proxy's certificate, not trusted: %s", untrusted).isEqualTo(60);
            assertThat(Kosa.ok(T, "net", id).stdout()).contains("trusts the host's CAs: no",
                    "registry.npmjs.org -> 203.0.113.0/24");
        } finally {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
        }
    }

    @Test
    @Tag("long") // the real Debian mirror and npm registry, 40-50 s under TCG; out of the default suite (30.5 min with it, goal 30): ./run-tests long
    void withBothSettingsAptAndEveryClientReachTheRealMirrorAndRegistry() throws Exception {
        writeExceptions();
        String id = Kosa.ok(Duration.ofMinutes(15), "create", "--workspace", "none", "--allow", "@debian",
                "--allow", "@npm", "--trust-host-cas").stdout().strip();
        try {
            String cas = dev.kosa8.egress.tls.HostCas.local(java.util.List.of()).describe();
            assertThat(cas).contains("/usr/local/share/ca-certificates/");
            assertThat(Kosa.ok(T, "net", id).stdout()).contains("trusts the host's CAs: " + cas);
            Kosa.Result curl = exec(id, "curl", "-sS", "--max-time", "60", NPM);
            assertThat(curl.exitCode()).as(curl.toString()).isZero();
            assertThat(curl.stdout()).containsPattern("\"name\":\\s*\"jq\"");
            Kosa.Result python = exec(id, "python3", "-c", "import urllib.request, json; print(json.load("
                    + "urllib.request.urlopen('" + NPM + "', timeout=60))['name'])");
            assertThat(python.stdout()).as(python.toString()).isEqualTo("jq\n");
            Kosa.Result apt = Kosa.run(Duration.ofMinutes(10), "exec", id, "--", "apt-get", "update");
            assertThat(apt.exitCode()).as(apt.toString()).isZero();
            assertThat(apt.stdout()).contains("deb.debian.org");
            String log = Kosa.ok(T, "net", "log", id).stdout();
            assertThat(log).contains("\"host\":\"deb.debian.org\"", "\"host\":\"registry.npmjs.org\"",
                    "is documentation range, dialed by the address exception deb.debian.org -> 203.0.113.0/24",
                    "dialed by the address exception registry.npmjs.org -> 203.0.113.0/24");
        } finally {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
        }
    }
}
