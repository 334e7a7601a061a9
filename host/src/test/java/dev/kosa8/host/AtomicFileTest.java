package dev.kosa8.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AtomicFileTest {
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

    @TempDir
    Path dir;

    private List<String> names() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void replacesTheFileWholeAndLeavesNothingBeside() throws Exception {
        Path f = dir.resolve("record.json");
        AtomicFile.write(f, "old".getBytes(StandardCharsets.UTF_8));
        AtomicFile.write(f, "new content".getBytes(StandardCharsets.UTF_8));
        assertThat(Files.readString(f)).isEqualTo("new content");
        AtomicFile.write(f, out -> out.write("streamed".getBytes(StandardCharsets.UTF_8)));
        assertThat(Files.readString(f)).isEqualTo("streamed");
        assertThat(names()).containsExactly("record.json");
    }

    @Test
    void aFailingWriterLeavesTheOldFileAndNoTemporaryFile() throws Exception {
        Path f = dir.resolve("record.json");
        AtomicFile.write(f, "old".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> AtomicFile.write(f, out -> {
            out.write("half of the new".getBytes(StandardCharsets.UTF_8));
            out.flush();
            throw new IOException("No space left on device");
        })).isInstanceOf(IOException.class).hasMessage("No space left on device");
        assertThatThrownBy(() -> AtomicFile.write(f, OWNER_ONLY, out -> {
            out.write(new byte[100_000]); // past the buffer: on disk in the temporary file
            throw new IllegalStateException("a bug in the writer");
        })).isInstanceOf(IllegalStateException.class);
        assertThat(Files.readString(f)).isEqualTo("old");
        assertThat(names()).containsExactly("record.json");
    }

    @Test
    void aFailingWriterOfANewFileLeavesNoFileAtAll() {
        Path f = dir.resolve("new.json");
        assertThatThrownBy(() -> AtomicFile.write(f, out -> {
            throw new IOException("cut");
        })).isInstanceOf(IOException.class);
        assertThat(f).doesNotExist();
        assertThat(dir).isEmptyDirectory();
    }

    @Test
    void aWriteAbandonedBeforeItsCommitChangesNothing() throws Exception {
        Path f = dir.resolve("pack");
        AtomicFile.write(f, "old".getBytes(StandardCharsets.UTF_8));
        try (AtomicFile.Pending p = AtomicFile.begin(f)) {
            p.stream().write("new".getBytes(StandardCharsets.UTF_8));
            p.stream().flush();
            assertThat(p.path()).as("written under a temporary name").hasContent("new");
            assertThat(AtomicFile.isTemporary(p.path())).isTrue();
        }
        assertThat(Files.readString(f)).isEqualTo("old");
        assertThat(names()).containsExactly("pack");
    }

    @Test
    void aCommittedWriteCannotBeCommittedOrUndoneAgain() throws Exception {
        Path f = dir.resolve("f");
        AtomicFile.Pending p = AtomicFile.begin(f);
        p.channel().write(java.nio.ByteBuffer.wrap(new byte[] {1, 2, 3}));
        p.commit();
        p.close();
        assertThat(Files.readAllBytes(f)).containsExactly(1, 2, 3);
        assertThatThrownBy(p::commit).isInstanceOf(IllegalStateException.class).hasMessageContaining("committed");
    }

    @Test
    void permissionsAreTheFilesFromItsCreationNeverWider() throws Exception {
        Path f = dir.resolve("secret-values.json");
        Files.writeString(f, "readable by all");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-rw-rw-"));
        List<Set<PosixFilePermission>> whileWritten = new ArrayList<>();
        try (AtomicFile.Pending p = AtomicFile.begin(f, OWNER_ONLY)) {
            whileWritten.add(Files.getPosixFilePermissions(p.path())); // before the first byte
            p.stream().write("sk-secret".getBytes(StandardCharsets.UTF_8));
            p.stream().flush();
            whileWritten.add(Files.getPosixFilePermissions(p.path()));
            p.commit();
        }
        assertThat(whileWritten).containsOnly(OWNER_ONLY);
        assertThat(Files.getPosixFilePermissions(f)).isEqualTo(OWNER_ONLY);
        assertThat(Files.readString(f)).isEqualTo("sk-secret");

        Set<PosixFilePermission> readable = PosixFilePermissions.fromString("rw-r--r--");
        Path cert = dir.resolve("ca.pem");
        AtomicFile.write(cert, readable, "cert".getBytes(StandardCharsets.UTF_8));
        assertThat(Files.getPosixFilePermissions(cert)).as("exactly the mode asked for, whatever the umask")
                .isEqualTo(readable);
    }

    @Test
    void streamsALargeFileThroughAndClosingTheStreamDoesNotEndTheWrite() throws Exception {
        Path f = dir.resolve("pages");
        byte[] chunk = new byte[1 << 16];
        MessageDigest written = MessageDigest.getInstance("SHA-256");
        AtomicFile.write(f, out -> {
            for (int i = 0; i < 64; i++) {
                java.util.Arrays.fill(chunk, (byte) i);
                out.write(chunk);
                written.update(chunk);
            }
            out.close(); // as a JSON writer does when it is done
        });
        assertThat(Files.size(f)).isEqualTo(64L << 16);
        assertThat(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(f))).isEqualTo(written.digest());
    }

    @Test
    void aHintIsReplacedWholeToo() throws Exception {
        Path f = dir.resolve("hot-pages");
        AtomicFile.writeHint(f, new byte[] {1});
        AtomicFile.writeHint(f, new byte[] {2, 3});
        assertThat(Files.readAllBytes(f)).containsExactly(2, 3);
        assertThat(names()).containsExactly("hot-pages");
    }

    @Test
    void temporaryFilesAreKnownByNameWithTheFileTheyWereFor() throws Exception {
        Path f = dir.resolve("c20261130T081512-3fa2.ram");
        try (AtomicFile.Pending p = AtomicFile.begin(f)) {
            assertThat(p.path().getParent()).isEqualTo(f.getParent());
            assertThat(p.path().getFileName().toString()).startsWith(".tmp-");
            assertThat(AtomicFile.targetName(p.path())).contains("c20261130T081512-3fa2.ram");
        }
        assertThat(AtomicFile.isTemporary(dir.resolve("c1.ram"))).isFalse();
        assertThat(AtomicFile.isTemporary(dir.resolve("c1.ram.tmp"))).isFalse();
        assertThat(AtomicFile.isTemporary(dir.resolve(".tmp-next-123.json"))).isFalse();
        assertThat(AtomicFile.targetName(dir.resolve(".tmp-hot-pages-0123456789abcdef"))).contains("hot-pages");
    }

    @Test
    void twoWritersOfOneFileEachLeaveAWholeVersion() throws Exception {
        Path f = dir.resolve("shared");
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            byte fill = (byte) t;
            threads.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 20; i++) {
                    try {
                        byte[] b = new byte[10_000];
                        java.util.Arrays.fill(b, fill);
                        AtomicFile.write(f, b);
                    } catch (IOException | RuntimeException e) {
                        failures.add(e);
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        assertThat(failures).isEmpty();
        byte[] last = Files.readAllBytes(f);
        assertThat(last).hasSize(10_000);
        for (byte b : last) {
            assertThat(b).isEqualTo(last[0]);
        }
        assertThat(names()).containsExactly("shared");
    }
}
