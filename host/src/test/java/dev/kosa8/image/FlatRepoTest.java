package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import dev.kosa8.image.debian.DebCache;
import dev.kosa8.image.debian.Locked;
import dev.kosa8.image.debian.Stanza;
import dev.kosa8.image.debian.Stanzas;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The repository a build from a lock installs from, read by the host's real apt: it finds exactly the locked
 * versions, resolves their dependencies among them, and downloads each file against the index's SHA-256.
 */
class FlatRepoTest {
    @TempDir
    Path tmp;

    /** A real .deb made by the host's dpkg-deb, named as the archive names it. */
    private Path deb(String name, String version, String control) throws Exception {
        Path src = tmp.resolve("src-" + name);
        Files.createDirectories(src.resolve("DEBIAN"));
        Files.writeString(src.resolve("DEBIAN/control"), "Package: " + name + "\nVersion: " + version
                + "\nArchitecture: all\nMaintainer: kosa8 <kosa8@example.org>\n" + control
                + "Description: a test\n two lines\n");
        Files.createDirectories(src.resolve("usr/share/" + name));
        Files.writeString(src.resolve("usr/share/" + name + "/file"), name + "\n");
        Path deb = tmp.resolve("cache").resolve(name + "_" + version + "_all.deb");
        Files.createDirectories(deb.getParent());
        run(tmp, "dpkg-deb", "--root-owner-group", "--build", src.toString(), deb.toString());
        return deb;
    }

    private static Locked locked(Path deb, String name, String version) throws Exception {
        return new Locked(name, version, "all", DebCache.hash(deb), Files.size(deb), "debian",
                "pool/main/k/" + name + "/" + deb.getFileName());
    }

    @Test
    void theHostsAptFindsExactlyTheLockedVersionsAndDownloadsThemChecked() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/apt-get")), "apt-get is needed to read the repository");
        Path a = deb("kosa8-a", "1.0-1", "Depends: kosa8-b (>= 2)\n");
        Path b = deb("kosa8-b", "2:2.5~rc1-3", "Essential: yes\nPriority: required\n");
        Path repo = tmp.resolve("repo");
        FlatRepo.write(repo, "bookworm", List.of(locked(a, "kosa8-a", "1.0-1"), locked(b, "kosa8-b", "2:2.5~rc1-3")),
                List.of(a, b));

        List<Stanza> index = Stanzas.parse(Files.readString(repo.resolve(FlatRepo.PACKAGES)), "Packages");
        assertThat(index).hasSize(2);
        assertThat(index.get(1).field("Essential")).contains("yes"); // the package's own fields, kept
        assertThat(index.get(1).field("Filename")).contains("./kosa8-b_2:2.5~rc1-3_all.deb");
        assertThat(index.get(0).field("SHA256")).contains(DebCache.hash(a));
        assertThat(Files.readString(repo.resolve(FlatRepo.RELEASE))).contains("SHA256:\n "
                + DebCache.hash(repo.resolve(FlatRepo.PACKAGES)));

        Path apt = tmp.resolve("apt");
        for (String d : List.of("state/lists/partial", "cache/archives/partial", "parts", "out")) {
            Files.createDirectories(apt.resolve(d));
        }
        Files.writeString(apt.resolve("sources.list"), FlatRepo.sourceLine(repo) + "\n");
        Files.writeString(apt.resolve("status"), "");
        String update = run(apt, aptGet(apt, "update"));
        assertThat(update).doesNotContain("W: ", "E: ");
        assertThat(run(apt, aptGet(apt, "-s", "install", "kosa8-a")))
                .contains("Inst kosa8-b (2:2.5~rc1-3", "Inst kosa8-a (1.0-1");
        // mmdebstrap finds the essential set by suite and codename (?archive(^bookworm$)): the repository has both
        String[] policy = aptGet(apt, "policy");
        policy[0] = "apt-cache";
        assertThat(run(apt, policy)).contains("release o=kosa8,a=bookworm,n=bookworm");
        run(apt.resolve("out"), aptGet(apt, "download", "kosa8-a", "kosa8-b"));
        assertThat(DebCache.hash(apt.resolve("out/kosa8-a_1.0-1_all.deb"))).isEqualTo(DebCache.hash(a));

        // and apt holds each file to the index's SHA-256: one changed after the index was written is refused
        Path inRepo = repo.resolve("kosa8-a_1.0-1_all.deb");
        byte[] bytes = Files.readAllBytes(inRepo);
        bytes[bytes.length - 1] ^= 1;
        Files.delete(inRepo); // a hard link into the cache: the cached file itself stays as it was
        Files.write(inRepo, bytes);
        Files.delete(apt.resolve("out/kosa8-a_1.0-1_all.deb"));
        Process p = new ProcessBuilder(aptGet(apt, "download", "kosa8-a")).directory(apt.resolve("out").toFile())
                .redirectErrorStream(true).start();
        String refused = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(refused).isNotZero();
        assertThat(refused).contains("Hash Sum mismatch");
        assertThat(DebCache.hash(a)).isEqualTo(locked(a, "kosa8-a", "1.0-1").sha256());
    }

    @Test
    void aFileThatIsNotTheLockedOneIsRefused() throws Exception {
        Path a = deb("kosa8-a", "1.0-1", "");
        Locked right = locked(a, "kosa8-a", "1.0-1");
        Locked otherHash = new Locked("kosa8-a", "1.0-1", "all", "00".repeat(32), right.size(), "debian",
                right.filename());
        assertThatThrownBy(() -> FlatRepo.write(tmp.resolve("r1"), "bookworm", List.of(otherHash), List.of(a)))
                .isInstanceOf(KosaException.class).hasMessageContaining("is not the file the lock names");
        Locked otherVersion = new Locked("kosa8-a", "1.0-2", "all", right.sha256(), right.size(), "debian",
                right.filename());
        assertThatThrownBy(() -> FlatRepo.write(tmp.resolve("r2"), "bookworm", List.of(otherVersion), List.of(a)))
                .isInstanceOf(KosaException.class).hasMessageContaining("it names kosa8-a 1.0-1 all");
    }

    @Test
    void aControlFileCannotSayWhereItsFileIsOrWhatItsHashIs() {
        Locked l = new Locked("x", "1", "all", "ab".repeat(32), 5, "debian", "pool/main/x/x_1_all.deb");
        for (String field : List.of("Filename: ../../etc/passwd", "SHA256: " + "cd".repeat(32), "size: 9")) {
            assertThatThrownBy(() -> FlatRepo.stanza(l, "Package: x\nVersion: 1\nArchitecture: all\n" + field
                    + "\n", "./x_1_all.deb")).isInstanceOf(KosaException.class)
                    .hasMessageContaining("which only a repository's index may have");
        }
        assertThatThrownBy(() -> FlatRepo.stanza(l, "Package: x\nVersion: 1\nArchitecture: all\n\nPackage: y\n",
                "./x")).isInstanceOf(KosaException.class).hasMessageContaining("2 stanzas");
    }

    private static String[] aptGet(Path apt, String... args) {
        List<String> argv = new ArrayList<>(List.of("apt-get", "-q",
                "-o", "Dir::Etc::SourceList=" + apt.resolve("sources.list"),
                "-o", "Dir::Etc::SourceParts=" + apt.resolve("parts"),
                "-o", "Dir::State=" + apt.resolve("state"),
                "-o", "Dir::State::status=" + apt.resolve("status"),
                "-o", "Dir::Cache=" + apt.resolve("cache"),
                "-o", "Debug::NoLocking=1", "-o", "APT::Sandbox::User=root"));
        argv.addAll(List.of(args));
        return argv.toArray(String[]::new);
    }

    private static String run(Path dir, String... argv) throws Exception {
        Process p = new ProcessBuilder(argv).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(String.join(" ", argv) + ": " + out).isZero();
        return out;
    }
}
