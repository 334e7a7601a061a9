package dev.kosa8.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code kosa8} launcher's fast path (docs/performance.md, "Where a CLI
 * start's time goes"): the real script, in a copy of a checkout with a
 * stand-in JDK (prints "fast" and its arguments) and a stand-in
 * {@code host-setup.sh} (prints "full check" and stops), so each test sees
 * which way the launcher went. A changed, added or removed source, or another
 * Java asked for, must take the full check, which builds what changed.
 */
class LauncherFastPathTest {
    @TempDir
    Path repo;

    Path jdk;
    Path source;
    Path stamp;
    final FileTime built = FileTime.fromMillis(1_700_000_000_000L);
    final FileTime checked = FileTime.fromMillis(1_700_000_100_000L);

    @BeforeEach
    void checkout() throws IOException {
        Path script = Path.of("").toAbsolutePath().getParent().resolve("kosa8");
        Files.copy(script, repo.resolve("kosa8"));
        Files.createDirectories(repo.resolve("scripts"));
        Files.writeString(repo.resolve("scripts/host-setup.sh"),
                "say() { :; }\nselect_java25() { echo 'full check'; exit 0; }\n");
        jdk = Files.createDirectories(repo.resolve("jdk/bin"));
        executable(jdk.resolve("java"), "#!/bin/sh\necho \"fast $*\"\n");
        jdk = jdk.getParent();
        Path target = Files.createDirectories(repo.resolve("host/target"));
        Files.writeString(target.resolve("kosa8.jar"), "jar");
        Files.writeString(target.resolve("kosa8.aot"), "cache");
        Path main = Files.createDirectories(repo.resolve("host/src/main/java"));
        source = Files.writeString(main.resolve("A.java"), "class A {}");
        stamp = target.resolve("launcher.stamp");
        Files.write(stamp, List.of("java :", jdk.toString(), repo.resolve("host/src/main").toString(),
                main.toString(), source.toString(), repo.resolve("kosa8").toString()));
        for (Path p : List.of(target.resolve("kosa8.jar"), target.resolve("kosa8.aot"), main, source,
                repo.resolve("host/src/main"), repo.resolve("kosa8"))) {
            Files.setLastModifiedTime(p, built);
        }
        Files.setLastModifiedTime(stamp, checked);
    }

    @Test
    void nothingChangedRunsTheJvmStraightAway() throws Exception {
        assertThat(launch()).isEqualTo("fast -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k "
                + "--enable-native-access=ALL-UNNAMED " + (LINUX ? "-Djava.nio.channels.spi.SelectorProvider="
                + SELECTOR_PROVIDER + " " : "") + "-XX:AOTCache=" + repo.resolve("host/target/kosa8.aot") + " -Xlog:aot=off -Xlog:cds=off -cp "
                + repo.resolve("host/target/kosa8.jar") + " dev.kosa8.cli.Main --version");
    }

    /** The socket provider the launcher names on Linux: the one the JDK picks by itself (else the CLI breaks). */
    static final String SELECTOR_PROVIDER = "sun.nio.ch.EPollSelectorProvider";
    static final boolean LINUX = System.getProperty("os.name").equals("Linux");

    @Test
    void theSocketProviderTheLauncherNamesIsTheOneTheJdkPicks() {
        org.junit.jupiter.api.Assumptions.assumeTrue(LINUX, "the launcher names it on Linux only");
        assertThat(System.getProperty("java.nio.channels.spi.SelectorProvider")).as("unset in this JVM").isNull();
        assertThat(java.nio.channels.spi.SelectorProvider.provider().getClass().getName()).isEqualTo(SELECTOR_PROVIDER);
    }

    @Test
    void anEditedSourceTakesTheFullCheck() throws Exception {
        Files.setLastModifiedTime(source, FileTime.fromMillis(checked.toMillis() + 1));
        assertThat(launch()).isEqualTo("full check");
    }

    @Test
    void anAddedOrRemovedSourceTakesTheFullCheck() throws Exception {
        Files.writeString(source.resolveSibling("B.java"), "class B {}"); // its folder's time changes
        assertThat(launch()).isEqualTo("full check");
    }

    @Test
    void aWatchedFileGoneTakesTheFullCheck() throws Exception {
        Files.delete(source);
        Files.setLastModifiedTime(source.getParent(), built);
        assertThat(launch()).isEqualTo("full check");
    }

    @Test
    void aJarNewerThanTheCheckTakesTheFullCheck() throws Exception {
        Files.setLastModifiedTime(repo.resolve("host/target/kosa8.jar"), FileTime.fromMillis(checked.toMillis() + 1));
        assertThat(launch()).isEqualTo("full check");
    }

    @Test
    void anotherJavaAskedForTakesTheFullCheck() throws Exception {
        assertThat(launch(Map.of("JAVA_HOME", jdk.toString()))).isEqualTo("full check");
    }

    @Test
    void anEmptyCacheTakesTheFullCheck() throws Exception {
        Files.writeString(repo.resolve("host/target/kosa8.aot"), "");
        Files.setLastModifiedTime(repo.resolve("host/target/kosa8.aot"), built);
        assertThat(launch()).isEqualTo("full check");
    }

    private String launch() throws Exception {
        return launch(Map.of());
    }

    private String launch(Map<String, String> env) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", repo.resolve("kosa8").toString(), "--version");
        pb.environment().remove("JAVA_HOME");
        pb.environment().remove("KOSA8_JAVA_HOME");
        pb.environment().remove("KOSA8_START_TRACE");
        pb.environment().putAll(env);
        pb.redirectErrorStream(true);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor()).as(out).isZero();
        return out;
    }

    private static void executable(Path file, String text) throws IOException {
        Files.writeString(file, text);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
}
