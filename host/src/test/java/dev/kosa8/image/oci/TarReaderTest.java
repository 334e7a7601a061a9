package dev.kosa8.image.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class TarReaderTest {
    private static List<TarEntry> read(byte[] tar, ImportLimits limits) throws IOException {
        TarReader r = new TarReader(new ByteArrayInputStream(tar), limits, "test layer");
        List<TarEntry> out = new ArrayList<>();
        for (TarEntry e = r.next(); e != null; e = r.next()) {
            r.content().transferTo(OutputStream.nullOutputStream());
            out.add(e);
        }
        return out;
    }

    @Test
    void readsEveryMemberTypeWithItsOwnerModeAndLink() throws IOException {
        byte[] tar = new TestTar().dir("etc/").file("etc/passwd", 0640, 0, 42, "root:x:0:0\n".getBytes())
                .symlink("bin/sh", "busybox").hardlink("bin/ls", "bin/busybox").device("dev/null", '3', 1, 3)
                .device("run/fifo", '6', 0, 0).file("sbin/su", 04755, 0, 0, new byte[0]).bytes();
        List<TarEntry> es = read(tar, ImportLimits.DEFAULT);
        assertThat(es).extracting(TarEntry::type).containsExactly(TarEntry.Type.DIRECTORY, TarEntry.Type.FILE,
                TarEntry.Type.SYMLINK, TarEntry.Type.HARDLINK, TarEntry.Type.CHAR_DEVICE, TarEntry.Type.FIFO,
                TarEntry.Type.FILE);
        assertThat(es.get(1)).extracting(TarEntry::mode, TarEntry::gid, TarEntry::size).containsExactly(0640, 42L, 11L);
        assertThat(es.get(2).linkName()).isEqualTo("busybox");
        assertThat(es.get(4)).extracting(TarEntry::devMajor, TarEntry::devMinor).containsExactly(1, 3);
        assertThat(es.get(6).mode()).isEqualTo(04755);
    }

    @Test
    void paxRecordsGiveLongNamesLinksOwnersAndXattrs() throws IOException {
        String longName = "a/".repeat(80) + "file";
        byte[] tar = new TestTar().pax("path", longName).file("short", "x").pax("uid", "100000")
                .file("big-uid", "y").pax("SCHILY.xattr.security.capability", "cap")
                .file("cap", "z").bytes();
        List<TarEntry> es = read(tar, ImportLimits.DEFAULT);
        assertThat(es.get(0).path()).isEqualTo(longName);
        assertThat(es.get(1).uid()).isEqualTo(100000L);
        assertThat(es.get(2).xattrs()).containsEntry("security.capability", "cap");
    }

    @Test
    void aStreamEndingInsideAMembersContentIsRefusedAsTruncated() {
        byte[] full = new TestTar().file("f", "x".repeat(2000)).bytes();
        byte[] cut = Arrays.copyOf(full, 512 + 700);
        assertThatThrownBy(() -> read(cut, ImportLimits.DEFAULT)).isInstanceOf(KosaException.class)
                .hasMessageContaining("test layer: truncated");
    }

    @Test
    void aStreamEndingInsideAHeaderIsRefusedAsTruncated() {
        byte[] full = new TestTar().file("f", "x").bytes();
        assertThatThrownBy(() -> read(Arrays.copyOf(full, 1024 + 100), ImportLimits.DEFAULT))
                .hasMessageContaining("truncated: it ends inside a header");
    }

    @Test
    void aDamagedHeaderIsRefusedByItsChecksum() {
        byte[] tar = new TestTar().file("f", "x").bytes();
        tar[3] ^= 1;
        assertThatThrownBy(() -> read(tar, ImportLimits.DEFAULT)).hasMessageContaining("checksum does not match");
    }

    @Test
    void moreMembersThanTheLimitAreRefused() {
        TestTar t = new TestTar();
        for (int i = 0; i < 11; i++) {
            t.file("f" + i, "x");
        }
        assertThatThrownBy(() -> read(t.bytes(), ImportLimits.DEFAULT.withMaxEntries(10)))
                .hasMessageContaining("more than 10 members");
    }

    @Test
    void aPaxHeaderOverItsLimitIsRefusedBeforeItIsRead() {
        byte[] tar = new TestTar().header("PaxHeader", 'x', 0644, 0, 0, 2L << 20, "", 0, 0).bytes();
        assertThatThrownBy(() -> read(tar, ImportLimits.DEFAULT)).hasMessageContaining("over the limit of 1048576");
    }

    @Test
    void aNameLongerThanTheLimitIsRefused() {
        byte[] tar = new TestTar().pax("path", "x".repeat(5000)).file("f", "x").bytes();
        assertThatThrownBy(() -> read(tar, ImportLimits.DEFAULT)).hasMessageContaining("longer than 4096 bytes");
    }

    @Test
    void sparseAndOtherMemberTypesAreRefusedNamingTheType() {
        byte[] tar = new TestTar().header("s", 'S', 0644, 0, 0, 0, "", 0, 0).bytes();
        assertThatThrownBy(() -> read(tar, ImportLimits.DEFAULT)).hasMessageContaining("has type 'S'");
    }

    /** Whatever the bytes, the reader ends, with members or with a KosaException: never another exception. */
    @Property(tries = 400)
    void anyBytesEndInMembersOrAClearRefusal(@ForAll("mutatedTars") byte[] tar) {
        try {
            List<TarEntry> es = read(tar, ImportLimits.DEFAULT.withMaxEntries(50));
            assertThat(es.size()).isLessThanOrEqualTo(50);
            for (TarEntry e : es) {
                assertThat(e.path().getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(4096);
                assertThat(e.size()).isNotNegative();
            }
        } catch (KosaException e) {
            assertThat(e.getMessage()).startsWith("test layer: ");
        } catch (IOException e) {
            throw new AssertionError("an IOException escaped: " + e, e);
        }
    }

    @Provide
    Arbitrary<byte[]> mutatedTars() {
        byte[] base = new TestTar().dir("etc/").file("etc/a", "hello").pax("path", "long/name")
                .symlink("l", "x").hardlink("h", "etc/a").file("b", "x".repeat(600)).bytes();
        Arbitrary<byte[]> flips = Arbitraries.integers().between(0, base.length - 1).list().ofMaxSize(8)
                .flatMap(positions -> Arbitraries.bytes().list().ofSize(positions.size()).map(values -> {
                    byte[] b = base.clone();
                    for (int i = 0; i < positions.size(); i++) {
                        b[positions.get(i)] = values.get(i);
                    }
                    return b;
                }));
        Arbitrary<byte[]> cuts = Arbitraries.integers().between(0, base.length).map(n -> Arrays.copyOf(base, n));
        Arbitrary<byte[]> noise = Arbitraries.bytes().array(byte[].class).ofMaxSize(3000);
        return Arbitraries.oneOf(flips, cuts, noise);
    }
}
