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
        assertThat(es.get(2).xattrs().get("security.capability")).isEqualTo("cap".getBytes());
    }

    /** cap_net_raw+ep as the kernel stores it (VFS_CAP_REVISION_2): binary, a newline and 0xff among its bytes. */
    static final byte[] CAP = {1, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

    @Test
    void binaryXattrValuesAreKeptByteForByteInGnuAndLibarchiveSpelling() throws IOException {
        byte[] odd = {'\n', 0, (byte) 0xff, '=', ' ', '"', '\\'};
        byte[] tar = new TestTar().pax("SCHILY.xattr.security.capability", CAP).file("ping", "p")
                .pax("SCHILY.xattr.user.odd", odd).pax("SCHILY.xattr.user.kosa8", "hello")
                .pax("LIBARCHIVE.xattr.user.a%3Db%25", java.util.Base64.getEncoder().withoutPadding()
                        .encode("libarchive".getBytes()))
                .file("f", "x").bytes();
        List<TarEntry> es = read(tar, ImportLimits.DEFAULT);
        assertThat(es.get(0).xattrs()).containsOnlyKeys("security.capability");
        assertThat(es.get(0).xattrs().get("security.capability")).isEqualTo(CAP);
        assertThat(es.get(1).xattrs()).containsOnlyKeys("user.odd", "user.kosa8", "user.a=b%");
        assertThat(es.get(1).xattrs().get("user.odd")).isEqualTo(odd);
        assertThat(es.get(1).xattrs().get("user.a=b%")).isEqualTo("libarchive".getBytes());
    }

    @Test
    void moreXattrsOnAMemberThanTheLimitAreRefused() {
        TestTar t = new TestTar();
        for (int i = 0; i < 5; i++) {
            t.pax("SCHILY.xattr.user.a" + i, "v");
        }
        byte[] tar = t.file("f", "x").bytes();
        assertThatThrownBy(() -> read(tar, ImportLimits.DEFAULT.withXattrLimits(4, 1024, 1 << 20)))
                .isInstanceOf(KosaException.class)
                .hasMessageContaining("test layer: member f: a member has more than 4 extended attributes");
    }

    @Test
    void xattrBytesOnAMemberOverTheLimitAreRefused() {
        byte[] tar = new TestTar().pax("SCHILY.xattr.user.big", new byte[2000]).file("f", "x").bytes();
        assertThatThrownBy(() -> read(tar, ImportLimits.DEFAULT.withXattrLimits(4, 1024, 1 << 20)))
                .hasMessageContaining("extended attributes hold more than 1024 bytes");
    }

    @Test
    void anXattrNameWithAControlCharacterOrNoNameIsRefused() {
        byte[] ctl = new TestTar().pax("SCHILY.xattr.user.a\nb", "v").file("f", "x").bytes();
        assertThatThrownBy(() -> read(ctl, ImportLimits.DEFAULT)).hasMessageContaining("user.a\\x0ab")
                .hasMessageContaining("other than printable ASCII");
        // nor a quote, a backslash or a space: nothing the disk writer's debugfs script would read as more than a name
        for (String name : new String[] {"user.a\"b", "user.a\\b", "user.a b", "user.é"}) {
            byte[] odd = new TestTar().pax("SCHILY.xattr." + name, "v").file("f", "x").bytes();
            assertThatThrownBy(() -> read(odd, ImportLimits.DEFAULT)).as(name)
                    .hasMessageContaining("other than printable ASCII");
        }
        byte[] empty = new TestTar().pax("SCHILY.xattr.", "v").file("f", "x").bytes();
        assertThatThrownBy(() -> read(empty, ImportLimits.DEFAULT)).hasMessageContaining("name is empty");
        byte[] b64 = new TestTar().pax("LIBARCHIVE.xattr.user.x", "!!").file("f", "x").bytes();
        assertThatThrownBy(() -> read(b64, ImportLimits.DEFAULT)).hasMessageContaining("not base64");
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

    /**
     * Any PAX header of extended attribute records, names and values any bytes: the member comes out with exactly
     * those attributes, or the reader refuses it clearly (a name it cannot take, more than the bounds).
     */
    @Property(tries = 400)
    void anyXattrRecordsComeOutExactlyOrAreRefusedClearly(@ForAll("xattrRecords") List<byte[][]> records) {
        ImportLimits limits = ImportLimits.DEFAULT.withXattrLimits(6, 600, 1 << 20);
        var paxBody = new java.io.ByteArrayOutputStream();
        java.util.Map<String, byte[]> expected = new java.util.TreeMap<>();
        for (byte[][] r : records) {
            String name = new String(r[0], StandardCharsets.UTF_8);
            paxBody.writeBytes(TestTar.paxRecord("SCHILY.xattr." + name, r[1]));
            expected.put(name, r[1]);
        }
        byte[] body = paxBody.toByteArray();
        TestTar t = new TestTar().header("PaxHeader", 'x', 0644, 0, 0, body.length, "", 0, 0).data(body);
        try {
            List<TarEntry> es = read(t.file("f", "x").bytes(), limits);
            assertThat(es).hasSize(1);
            assertThat(es.getFirst().xattrs()).containsOnlyKeys(expected.keySet());
            expected.forEach((k, v) -> assertThat(es.getFirst().xattrs().get(k)).as(k).isEqualTo(v));
            assertThat(expected.size()).isLessThanOrEqualTo(6);
            assertThat(expected.entrySet().stream().mapToInt(x -> x.getKey().getBytes(StandardCharsets.UTF_8).length
                    + x.getValue().length).sum()).isLessThanOrEqualTo(600);
        } catch (KosaException e) {
            assertThat(e.getMessage()).startsWith("test layer: ");
        } catch (IOException e) {
            throw new AssertionError("an IOException escaped: " + e, e);
        }
    }

    @Provide
    Arbitrary<List<byte[][]>> xattrRecords() {
        Arbitrary<byte[]> names = Arbitraries.oneOf(
                Arbitraries.strings().withChars("abcuser.securitycapability_-").ofMinLength(0).ofMaxLength(20)
                        .map(x -> ("user." + x).getBytes(StandardCharsets.UTF_8)),
                Arbitraries.strings().ofMinLength(0).ofMaxLength(300).map(x -> x.replace("=", "")
                        .getBytes(StandardCharsets.UTF_8)));
        Arbitrary<byte[]> values = Arbitraries.bytes().array(byte[].class).ofMaxSize(200);
        return names.flatMap(n -> values.map(v -> new byte[][] {n, v}))
                .list().ofMaxSize(8)
                .filter(l -> l.stream().map(r -> new String(r[0], StandardCharsets.UTF_8)).distinct().count()
                        == l.size());
    }

    @Provide
    Arbitrary<byte[]> mutatedTars() {
        byte[] base = new TestTar().dir("etc/").file("etc/a", "hello").pax("path", "long/name")
                .symlink("l", "x").hardlink("h", "etc/a").pax("SCHILY.xattr.security.capability", CAP)
                .pax("LIBARCHIVE.xattr.user.k%3D", "aGVsbG8").file("b", "x".repeat(600)).bytes();
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
