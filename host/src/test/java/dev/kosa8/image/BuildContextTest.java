package dev.kosa8.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a COPY takes from the build context, where it goes, and the stream the build sandbox unpacks. */
class BuildContextTest {
    @TempDir
    Path dir;
    Path ctx;

    @BeforeEach
    void context() throws Exception {
        ctx = Files.createDirectories(dir.resolve("ctx"));
        Files.createDirectories(ctx.resolve("src/sub"));
        Files.writeString(ctx.resolve("src/a.txt"), "a");
        Files.writeString(ctx.resolve("src/sub/b.txt"), "bb");
        Files.writeString(ctx.resolve("src/skip.log"), "log");
        Files.writeString(ctx.resolve("src/secret.txt"), "secret");
        Files.createSymbolicLink(ctx.resolve("src/link"), Path.of("a.txt"));
        Files.writeString(ctx.resolve("top.txt"), "top");
        Files.setPosixFilePermissions(ctx.resolve("top.txt"), PosixFilePermissions.fromString("rwxr-x---"));
        Files.writeString(ctx.resolve(".dockerignore"), "# comment\n**/*.log\nsrc/secret.txt\n");
        Files.writeString(dir.resolve("outside.txt"), "outside");
    }

    static List<String> destinations(List<BuildContext.Entry> entries) {
        return entries.stream().map(e -> e.destination() + (e.type() == BuildContext.Type.DIRECTORY ? "/" : ""))
                .toList();
    }

    @Test
    void aFolderCopiesItsContentsAFileGoesToOrIntoTheDestinationAndIgnoredFilesStayOut() {
        BuildContext c = BuildContext.open(ctx);
        assertThat(destinations(c.select(List.of("src"), "/app/", "Dockerfile line 2")))
                .containsExactly("/app/a.txt", "/app/link", "/app/sub/", "/app/sub/b.txt");
        assertThat(destinations(c.select(List.of("top.txt"), "/opt/top", "l"))).containsExactly("/opt/top");
        assertThat(destinations(c.select(List.of("top.txt"), "/opt/", "l"))).containsExactly("/opt/top.txt");
        assertThat(destinations(c.select(List.of("src/*.txt", "top.txt"), "/d/", "l")))
                .containsExactly("/d/a.txt", "/d/top.txt");
        // a link named as a source is followed (inside the context), as Docker follows it: its target is copied
        BuildContext.Entry named = c.select(List.of("src/link"), "/l", "l").getFirst();
        assertThat(named.type()).isEqualTo(BuildContext.Type.FILE);
        assertThat(named.source()).isEqualTo(ctx.resolve("src/a.txt"));
        // inside a copied folder it stays a link
        BuildContext.Entry link = c.select(List.of("src"), "/app/", "l").stream()
                .filter(x -> x.destination().equals("/app/link")).findFirst().orElseThrow();
        assertThat(link.type()).isEqualTo(BuildContext.Type.SYMLINK);
        assertThat(link.linkTarget()).isEqualTo("a.txt");
        assertThat(c.select(List.of("top.txt"), "/t", "l").getFirst().mode()).isEqualTo(0750);
        assertThatThrownBy(() -> c.select(List.of("src/secret.txt"), "/x", "Dockerfile line 4"))
                .isInstanceOf(KosaException.class).hasMessageContaining("Dockerfile line 4: COPY source src/secret.txt "
                        + "is not in the build context");
        assertThatThrownBy(() -> c.select(List.of("src/a.txt", "top.txt"), "/x", "l"))
                .hasMessageContaining("trailing /");
    }

    @Test
    void nothingOutsideTheContextIsReadByDotDotOrByALink() throws Exception {
        BuildContext c = BuildContext.open(ctx);
        assertThatThrownBy(() -> c.select(List.of("../outside.txt"), "/x", "Dockerfile line 3"))
                .isInstanceOf(KosaException.class).hasMessageContaining("is outside the build context");
        Files.createSymbolicLink(ctx.resolve("out"), dir.resolve("outside.txt"));
        assertThatThrownBy(() -> c.select(List.of("out"), "/x", "l")).hasMessageContaining("outside the build context");
        Files.createSymbolicLink(ctx.resolve("outdir"), dir);
        assertThatThrownBy(() -> c.select(List.of("outdir/outside.txt"), "/x", "l"))
                .hasMessageContaining("outside the build context");
        // a link inside a copied folder is copied as a link, never followed
        Files.createSymbolicLink(ctx.resolve("src/escape"), dir.resolve("outside.txt"));
        BuildContext.Entry e = c.select(List.of("src"), "/app/", "l").stream()
                .filter(x -> x.destination().equals("/app/escape")).findFirst().orElseThrow();
        assertThat(e.type()).isEqualTo(BuildContext.Type.SYMLINK);
    }

    @Test
    void theHashChangesWithAFilesContentOrModeAndNotOtherwise() throws Exception {
        BuildContext c = BuildContext.open(ctx);
        String h1 = BuildContext.hash(c.select(List.of("src"), "/app/", "l"));
        assertThat(BuildContext.hash(c.select(List.of("src"), "/app/", "l"))).isEqualTo(h1);
        Files.writeString(ctx.resolve("src/skip.log"), "ignored files change nothing");
        assertThat(BuildContext.hash(c.select(List.of("src"), "/app/", "l"))).isEqualTo(h1);
        Files.writeString(ctx.resolve("src/a.txt"), "A");
        String h2 = BuildContext.hash(c.select(List.of("src"), "/app/", "l"));
        assertThat(h2).isNotEqualTo(h1);
        Files.setPosixFilePermissions(ctx.resolve("src/a.txt"), PosixFilePermissions.fromString("rwx------"));
        assertThat(BuildContext.hash(c.select(List.of("src"), "/app/", "l"))).isNotEqualTo(h2);
    }

    @Test
    void theArchiveHoldsEachEntryOwnedByRootAtItsPlaceWithItsModeOrChmods() throws Exception {
        BuildContext c = BuildContext.open(ctx);
        List<BuildContext.Entry> entries = c.select(List.of("src", "top.txt"), "/app/", "l");
        for (String chmod : List.of("", "0644")) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            CopyArchive.write(entries, chmod, out);
            List<String> seen = new ArrayList<>();
            try (TarArchiveInputStream tar = new TarArchiveInputStream(new ByteArrayInputStream(out.toByteArray()))) {
                TarArchiveEntry t;
                while ((t = tar.getNextEntry()) != null) {
                    assertThat(t.getLongUserId()).isZero();
                    assertThat(t.getLongGroupId()).isZero();
                    String body = t.isFile() ? new String(tar.readAllBytes(), StandardCharsets.UTF_8) : "";
                    seen.add(t.getName() + " " + Integer.toOctalString(t.getMode() & 07777)
                            + (t.isSymbolicLink() ? " -> " + t.getLinkName() : "") + (body.isEmpty() ? "" : " " + body));
                }
            }
            if (chmod.isEmpty()) {
                assertThat(seen).contains("app/a.txt 644 a", "app/sub/b.txt 644 bb", "app/link 777 -> a.txt",
                        "app/top.txt 750 top");
            } else {
                assertThat(seen).contains("app/top.txt 644 top");
            }
            assertThat(seen).noneMatch(s -> s.contains("secret") || s.contains(".log"));
        }
    }

    @Test
    void dockerIgnoreMatchesAsDockerDoesWithExceptionsAndParents() {
        DockerIgnore i = DockerIgnore.parse("""
                # build output
                target
                **/*.tmp
                docs/*.md
                !docs/README.md
                /secrets/
                [ab].txt
                """);
        assertThat(i.excludes("target")).isTrue();
        assertThat(i.excludes("target/classes/x.class")).as("under an excluded folder").isTrue();
        assertThat(i.excludes("a/b/c.tmp")).isTrue();
        assertThat(i.excludes("c.tmp")).isTrue();
        assertThat(i.excludes("docs/guide.md")).isTrue();
        assertThat(i.excludes("docs/README.md")).isFalse();
        assertThat(i.excludes("docs/sub/guide.md")).isFalse();
        assertThat(i.excludes("secrets/key")).isTrue();
        assertThat(i.excludes("a.txt")).isTrue();
        assertThat(i.excludes("c.txt")).isFalse();
        assertThat(i.excludes("src/target.java")).isFalse();
    }
}
