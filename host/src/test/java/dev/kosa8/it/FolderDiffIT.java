package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code kosa8 diff}: what a real guest changed in the folder, against a checkpoint and since the sandbox
 * started, in each of its formats, with changes to held paths left to {@code kosa8 review}.
 */
class FolderDiffIT {
    static final Duration T = Duration.ofMinutes(3);

    @RegisterExtension
    static final ReplaceableSandbox SANDBOX = new ReplaceableSandbox("FolderDiffIT", "--memory", "256M");

    @Test
    void aGuestsEditsShowExactlyAgainstACheckpointAndSinceTheStart() throws Exception {
        SharedSandbox.Booted box = SANDBOX.running();
        String id = box.id();
        Path folder = box.workspace();
        Files.writeString(folder.resolve("notes.txt"), "one\ntwo\nthree\n");
        Files.writeString(folder.resolve("gone.txt"), "bye\n");
        Files.writeString(folder.resolve("run.sh"), "#!/bin/sh\necho hi\n");
        Files.setPosixFilePermissions(folder.resolve("run.sh"), PosixFilePermissions.fromString("rw-r--r--"));
        Files.write(folder.resolve("data.bin"), new byte[] {1, 0, 2, 0, 3});
        Files.createSymbolicLink(folder.resolve("link"), Path.of("notes.txt"));
        String base = Kosa.ok(T, "checkpoint", id, "-m", "base").stdout().strip();

        Kosa.Result edits = box.exec(T, "sh", "-euc", """
                cd /workspace
                sed -i 's/two/TWO/' notes.txt
                rm gone.txt
                chmod 755 run.sh
                ln -sfn run.sh link
                mkdir src && printf 'print(1)\\n' > src/new.py
                printf '\\0\\1\\2\\3' > data.bin
                printf 'export X=1\\n' > .envrc
                """);
        assertThat(edits.exitCode()).as(edits.toString()).isZero();

        Kosa.Result full = Kosa.ok(T, "diff", id, base);
        assertThat(full.stdout()).contains("""
                modified  notes.txt
                --- a/notes.txt
                +++ b/notes.txt
                @@ -1,3 +1,3 @@
                 one
                -two
                +TWO
                 three
                """, """
                deleted   gone.txt
                --- a/gone.txt
                +++ /dev/null
                @@ -1,1 +0,0 @@
                -bye
                """, "mode      run.sh  0644 -> 0755\n", "symlink   link  -> notes.txt => -> run.sh\n",
                "added     src  (dir)\n", """
                added     src/new.py
                --- /dev/null
                +++ b/src/new.py
                @@ -0,0 +1,1 @@
                +print(1)
                """, "modified  data.bin  (binary or larger than 1 MiB, 4 B)\n");
        assertThat(full.stdout()).as("a held path is not in the folder").doesNotContain(".envrc");
        assertThat(full.stderr()).contains("1 change to held paths not in your folder: kosa8 review " + id);

        assertThat(Kosa.ok(T, "diff", id, base, "--name-only").stdout().lines().toList())
                .containsExactly("data.bin", "gone.txt", "link", "notes.txt", "run.sh", "src", "src/new.py");
        assertThat(Kosa.ok(T, "diff", id, base, "--stat").stdout()).contains(" notes.txt  | +1 -1\n",
                " gone.txt   | +0 -1\n", " run.sh     | mode  0644 -> 0755\n",
                " 7 paths changed, 2 lines added, 2 removed\n");
        JsonNode json = JsonMapper.builder().build().readTree(Kosa.ok(T, "diff", id, base, "--json").stdout());
        assertThat(json.path("since").asText()).isEqualTo(base);
        assertThat(json.path("held").asInt()).isEqualTo(1);
        JsonNode notes = json.path("changes").get(3);
        assertThat(notes.path("path").asText()).isEqualTo("notes.txt");
        assertThat(notes.path("change").asText()).isEqualTo("modified");
        assertThat(notes.path("added").asInt()).isEqualTo(1);
        assertThat(notes.path("before").path("sha256").asText()).hasSize(64)
                .isNotEqualTo(notes.path("after").path("sha256").asText());

        // since the start: the folder was empty then, so what is there now was added; gone.txt came and went
        assertThat(Kosa.ok(T, "diff", id, "--name-only").stdout().lines().toList())
                .containsExactly("data.bin", "link", "notes.txt", "run.sh", "src", "src/new.py");
        // a diff leaves the checkpoints as they were
        assertThat(Kosa.ok(T, "checkpoints", id).stdout().lines().skip(1).toList()).hasSize(1);
    }

    @Test
    void badInputIsAClearErrorThatChangesNothing() throws Exception {
        SharedSandbox.Booted box = SANDBOX.running();
        String id = box.id();
        String checkpointsBefore = Kosa.ok(T, "checkpoints", id).stdout();
        java.util.List<Path> folderBefore;
        try (var files = Files.walk(box.workspace())) {
            folderBefore = files.sorted().toList();
        }
        Kosa.Result noCheckpoint = Kosa.run(T, "diff", id, "c19990101T000000-0000");
        assertThat(noCheckpoint.exitCode()).as(noCheckpoint.toString()).isEqualTo(2);
        // "has no checkpoints" when it has none yet, "has no checkpoint 'c1999…'" once it has: each says what to run
        assertThat(noCheckpoint.stderr()).contains("has no checkpoint", "kosa8 checkpoint");
        Kosa.Result noSandbox = Kosa.run(T, "diff", "abcdef123456");
        assertThat(noSandbox.exitCode()).isEqualTo(2);
        assertThat(noSandbox.stderr()).contains("no sandbox 'abcdef123456'", "kosa8 ls");
        Kosa.Result notAnId = Kosa.run(T, "diff", "../x");
        assertThat(notAnId.exitCode()).isEqualTo(2);
        assertThat(notAnId.stderr()).contains("is not a sandbox id");
        Kosa.Result twoFormats = Kosa.run(T, "diff", id, "--stat", "--json");
        assertThat(twoFormats.exitCode()).isEqualTo(2);
        assertThat(twoFormats.stderr()).contains("mutually exclusive");
        assertThat(Kosa.ok(T, "checkpoints", id).stdout()).isEqualTo(checkpointsBefore);
        try (var files = Files.walk(box.workspace())) {
            assertThat(files.sorted().toList()).isEqualTo(folderBefore);
        }
    }
}
