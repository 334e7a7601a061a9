package dev.kosa8.image;

import dev.kosa8.image.CpioArchive.CharDevice;
import dev.kosa8.image.CpioArchive.Directory;
import dev.kosa8.image.CpioArchive.Entry;
import dev.kosa8.image.CpioArchive.RegularFile;
import dev.kosa8.image.CpioArchive.Symlink;
import org.apache.commons.compress.archivers.cpio.CpioArchiveEntry;
import org.apache.commons.compress.archivers.cpio.CpioArchiveInputStream;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CpioArchiveTest {
    private static final List<Entry> ENTRIES = List.of(
            new Directory("bin", 0755),
            new RegularFile("bin/busybox", 0755, new byte[] {1, 2, 3}),
            new Directory("dev", 0755),
            new CharDevice("dev/console", 0600, 5, 1),
            new RegularFile("init", 0755, "#!/bin/busybox sh\n".getBytes()),
            new Symlink("sbin", "bin"));

    private static byte[] write(List<Entry> entries) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CpioArchive.write(entries, out);
        return out.toByteArray();
    }

    @Test
    void sameEntriesInAnyOrderGiveTheSameBytes() throws IOException {
        List<Entry> reversed = new ArrayList<>(ENTRIES);
        java.util.Collections.reverse(reversed);
        assertThat(write(reversed)).isEqualTo(write(ENTRIES));
    }

    @Test
    void writesNewcSortedRootOwnedAtTheEpoch() throws IOException {
        byte[] archive = write(ENTRIES);
        assertThat(new String(archive, 0, 6)).isEqualTo("070701");

        List<CpioArchiveEntry> read = new ArrayList<>();
        try (CpioArchiveInputStream in = new CpioArchiveInputStream(new ByteArrayInputStream(archive))) {
            for (CpioArchiveEntry e; (e = in.getNextCPIOEntry()) != null; ) {
                read.add(e);
            }
        }
        assertThat(read).extracting(CpioArchiveEntry::getName)
                .containsExactly("bin", "bin/busybox", "dev", "dev/console", "init", "sbin");
        assertThat(read).allSatisfy(e -> {
            assertThat(e.getTime()).isZero();
            assertThat(e.getUID()).isZero();
            assertThat(e.getGID()).isZero();
        });
        assertThat(read.get(1).getMode()).isEqualTo(0100755);
        assertThat(read.get(1).getSize()).isEqualTo(3);
        assertThat(read.get(3).isCharacterDevice()).isTrue();
        assertThat(read.get(3).getRemoteDeviceMaj()).isEqualTo(5);
        assertThat(read.get(3).getRemoteDeviceMin()).isEqualTo(1);
        assertThat(read.get(5).isSymbolicLink()).isTrue();
        assertThat(read).extracting(CpioArchiveEntry::getInode).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);
    }

    @Test
    void refusesDuplicateAndEscapingPaths() {
        assertThatThrownBy(() -> write(List.of(new Directory("bin", 0755), new Directory("bin", 0700))))
                .hasMessageContaining("duplicate cpio entry bin");
        assertThatThrownBy(() -> new Directory("/bin", 0755)).hasMessageContaining("bad cpio path");
        assertThatThrownBy(() -> new Directory("bin/../..", 0755)).hasMessageContaining("bad cpio path");
    }
}
