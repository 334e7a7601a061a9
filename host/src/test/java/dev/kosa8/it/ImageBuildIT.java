package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * {@code kosa8 image build} from real Dockerfiles, in real build sandboxes, against the real Debian mirror (which
 * this machine reaches through an address exception and its TLS-inspecting proxy's CA; see
 * {@link HostNetworkSettingsIT}), and sandboxes made from the result.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Tag("long") // apt-get in build sandboxes under TCG, against the real mirror: 5-10 minutes; ./run-tests long
class ImageBuildIT {
    static final Duration BUILD = Duration.ofMinutes(30);
    static final Duration T = Duration.ofMinutes(3);
    static final Path SETTINGS = Kosa.HOME.resolve("config").resolve("network.json");
    static final String TAG = "it/jq-app:1";
    static Path context;
    static long firstBuildMillis;

    static final String DOCKERFILE = """
            # the app image
            FROM kosa8/debian
            ARG GREETING=hello
            ENV APP_GREETING=$GREETING \\
                APP_HOME=/srv/app
            COPY . $APP_HOME/
            RUN apt-get update && apt-get install -y --no-install-recommends jq && useradd -m app
            WORKDIR $APP_HOME
            USER app
            CMD ["sh", "-c", "echo default $APP_GREETING; id -un"]
            """;

    @BeforeAll
    static void setUp() throws Exception {
        Files.createDirectories(SETTINGS.getParent());
        Files.writeString(SETTINGS, """
                {"addressExceptions": {"deb.debian.org": ["203.0.113.0/24"],
                                       "security.debian.org": ["203.0.113.0/24"]}}
                """);
        context = Kosa.HOME.resolveSibling("it-build").resolve("app");
        if (Files.exists(context)) {
            Kosa.deleteTree(context);
        }
        Files.createDirectories(context.resolve("conf"));
        Files.writeString(context.resolve("Dockerfile"), DOCKERFILE);
        // the Dockerfile too, as Docker allows: the second test changes it, and COPY . must not see that
        Files.writeString(context.resolve(".dockerignore"), "secret.txt\n*.log\nDockerfile\n");
        Files.writeString(context.resolve("data.json"), "{\"answer\": 42}\n");
        Files.writeString(context.resolve("conf/app.conf"), "mode=test\n");
        Files.writeString(context.resolve("secret.txt"), "must not be copied\n");
        Files.writeString(context.resolve("debug.log"), "must not be copied\n");
    }

    @AfterAll
    static void tearDown() throws Exception {
        Kosa.run(Duration.ofMinutes(1), "image", "rm", TAG);
        Files.deleteIfExists(SETTINGS);
    }

    static Kosa.Result build(Path dir, String... extra) {
        String[] args = new String[extra.length + 9];
        args[0] = "image";
        args[1] = "build";
        args[2] = "-t";
        args[3] = TAG;
        args[4] = "--allow";
        args[5] = "@debian";
        args[6] = "--trust-host-cas";
        System.arraycopy(extra, 0, args, 7, extra.length);
        args[args.length - 2] = "--";
        args[args.length - 1] = dir.toString();
        return Kosa.run(BUILD, args);
    }

    @Test
    @Order(1)
    void aDockerfileBuildsAnImageWhoseSandboxesRunAsItsUserInItsDirectoryWithItsEnv() {
        long t0 = System.nanoTime();
        Kosa.Result b = build(context, "--no-cache"); // a first build, whatever an earlier run left in the cache
        firstBuildMillis = (System.nanoTime() - t0) / 1_000_000;
        assertThat(b.exitCode()).as(b.toString()).isZero();
        assertThat(b.stderr()).contains("[5/8] RUN apt-get update", "image " + TAG + " built");
        assertThat(Kosa.ok(T, "image", "ls").stdout()).contains(TAG, "kosa8/debian");

        Kosa.Result r = Kosa.run(T, "run", "--image", TAG, "--workspace", "none", "--", "sh", "-c",
                "id -un; pwd; echo $APP_GREETING; jq -n '1+41'; ls -A /srv/app; cat /srv/app/conf/app.conf");
        assertThat(r.exitCode()).as(r.toString()).isZero();
        // .dockerignore leaves out secret.txt, *.log and the Dockerfile; it is copied itself, as Docker copies it
        assertThat(r.stdout()).isEqualTo("app\n/srv/app\nhello\n42\n.dockerignore\nconf\ndata.json\n"
                + "mode=test\n");
        Kosa.Result dflt = Kosa.run(T, "run", "--image", TAG, "--workspace", "none");
        assertThat(dflt.stdout()).as(dflt.toString()).isEqualTo("default hello\napp\n");
        assertThat(Kosa.ok(T, "image", "inspect", TAG).stdout()).contains("\"APP_HOME=/srv/app\"",
                "\"workingDir\" : \"/srv/app\"", "\"user\" : \"app\"");
    }

    @Test
    @Order(2)
    void aSecondBuildWithOnlyTheLastStepChangedReusesTheCachedPrefix() throws Exception {
        // changed to what no earlier run of this test built, whose steps an it-home kept between runs holds
        String changed = "changed-" + Long.toHexString(System.nanoTime());
        Files.writeString(context.resolve("Dockerfile"), DOCKERFILE.replace("echo default", "echo " + changed));
        long t0 = System.nanoTime();
        Kosa.Result b = build(context);
        long second = (System.nanoTime() - t0) / 1_000_000;
        assertThat(b.exitCode()).as(b.toString()).isZero();
        assertThat(b.stderr()).contains("[4/8] CACHED COPY", "[5/8] CACHED RUN apt-get update", "[7/8] CACHED USER app")
                .contains("[8/8] CMD").doesNotContain("starting the build sandbox");
        System.out.printf("ImageBuildIT: first build %d ms, second (last step changed) %d ms%n", firstBuildMillis,
                second);
        assertThat(second).as("the cached build (%d ms) against the first (%d ms)", second, firstBuildMillis)
                .isLessThan(firstBuildMillis / 4);
        Kosa.Result dflt = Kosa.run(T, "run", "--image", TAG, "--workspace", "none");
        assertThat(dflt.stdout()).as(dflt.toString()).isEqualTo(changed + " hello\napp\n");
    }

    @Test
    @Order(3)
    void aRunThatReachesForAnUnlistedHostFailsWithTheDenialAndListsNoImage() throws Exception {
        Path dir = Files.createDirectories(context.resolveSibling("denied"));
        Files.writeString(dir.resolve("Dockerfile"), """
                FROM kosa8/debian
                RUN curl -sS --max-time 60 https://example.com/ > /tmp/page
                """);
        String before = Kosa.ok(T, "ls").stdout();
        Kosa.Result b = Kosa.run(BUILD, "image", "build", "-t", "it/denied", dir.toString());
        assertThat(b.exitCode()).as(b.toString()).isNotZero();
        assertThat(b.stderr()).contains("line 2: RUN curl", "failed with exit code", "the network refused: example.com",
                "not on the sandbox's allow-list", "--allow");
        assertThat(Kosa.ok(T, "image", "ls").stdout()).doesNotContain("it/denied");
        assertThat(Kosa.ok(T, "ls").stdout()).as("no build sandbox is left").isEqualTo(before);
    }

    @Test
    @Order(4)
    void badDockerfilesAndContextsAreClearErrorsAndListNothing() throws Exception {
        Path dir = Files.createDirectories(context.resolveSibling("bad"));
        Files.writeString(dir.resolve("outside.txt"), "x");
        Path ctx = Files.createDirectories(dir.resolve("ctx"));
        String[][] cases = {
            {"FROM kosa8/debian\nRUN true\nFROBNICATE now\n", "line 3: unknown instruction FROBNICATE"},
            {"FROM kosa8/debian\nCOPY ../outside.txt /x\n", "is outside the build context"},
            {"FROM kosa8/debian\nCOPY missing.txt /x\n", "COPY source missing.txt is not in the build context"},
            {"FROM it/never-built\nRUN true\n", "FROM it/never-built: there is no such image here"},
        };
        for (String[] c : cases) {
            Files.writeString(ctx.resolve("Dockerfile"), c[0]);
            Kosa.Result b = Kosa.run(BUILD, "image", "build", "-t", "it/bad", ctx.toString());
            assertThat(b.exitCode()).as(b.toString()).isEqualTo(2);
            assertThat(b.stderr()).as(c[0]).contains(c[1]);
        }
        Files.writeString(ctx.resolve("Dockerfile"), "FROM kosa8/debian\nRUN curl -sS --max-time 60 "
                + "https://no-such-host.invalid/\n");
        Kosa.Result net = Kosa.run(BUILD, "image", "build", "-t", "it/bad", "--allow", "no-such-host.invalid",
                ctx.toString());
        assertThat(net.exitCode()).as(net.toString()).isNotZero();
        assertThat(net.stderr()).contains("line 2: RUN curl", "failed with exit code");
        assertThat(Kosa.ok(T, "image", "ls").stdout()).doesNotContain("it/bad");
    }
}
