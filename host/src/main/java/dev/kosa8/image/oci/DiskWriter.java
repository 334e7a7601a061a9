package dev.kosa8.image.oci;

import dev.kosa8.host.FileTrees;
import dev.kosa8.host.HostCommand;
import dev.kosa8.host.KosaException;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Writes an imported image's disk: an ext4 file system (label {@code kosa8-root}) whose {@code /rootfs} is the
 * image's root as {@link RootTree} built it and whose {@code /kosa8} holds kosa8's own files ({@link
 * GuestRuntime}), which the guest's init mounts apart, read-only, at {@code /run/kosa8/sys}. {@code mke2fs -d}
 * copies the folders in; {@code debugfs} then sets every path's owner, group and full mode, makes the device
 * nodes and writes the extended attributes ({@code ea_set}), as the layers said, inside the file system: nothing on
 * the host is ever owned by another user, and no {@code security.*} attribute (which needs privilege to set on a
 * host file) is ever set on the host.
 */
final class DiskWriter {
    /** The folder of the disk that is the guest's {@code /}. */
    static final String ROOTFS = "rootfs";
    /** The folder of kosa8's own files. */
    static final String KOSA8 = "kosa8";
    /** A file in {@link #KOSA8} that tells the init this disk is laid out so. */
    static final String LAYOUT = "layout";
    private static final long GIB = 1L << 30;
    /** The longest value written on the command line: escaped (4 characters a byte) beside a 4 KiB path, in 8 KiB. */
    private static final int INLINE_VALUE = 256;
    /**
     * The longest line of the script, newline included. debugfs reads its script with {@code fgets} into 8 KiB and
     * runs what is past that as a command of its own: a longer line (a path of thousands of quotes, each doubled)
     * would let an image name a debugfs command, so it is refused, never cut.
     */
    static final int MAX_LINE = 8000;

    private DiskWriter() {
    }

    /**
     * @param stage a folder holding {@value #ROOTFS} (the tree's root) and {@value #KOSA8}
     * @param qcow2 the disk to write
     * @return the disk's virtual size
     */
    static long write(Path stage, RootTree tree, long kosaBytes, Path qcow2, Path log) throws IOException {
        Files.writeString(stage.resolve(KOSA8).resolve(LAYOUT), "1\n");
        long size = Math.max(4 * GIB, ((tree.unpackedBytes() + kosaBytes) * 3 / 2 + GIB) / GIB * GIB);
        long inodes = Math.max(65_536, tree.meta().size() * 2L + 16_384);
        Path raw = qcow2.resolveSibling(qcow2.getFileName() + ".raw");
        Path script = qcow2.resolveSibling(qcow2.getFileName() + ".debugfs");
        Path values = qcow2.resolveSibling(qcow2.getFileName() + ".xattrs");
        // debugfs's own folder: an empty one of kosa8's, so that no command of it (there is none that writes a host
        // file, but `logdump FILE` and `lcd` would) could reach a file of the user's
        Path cwd = qcow2.resolveSibling(qcow2.getFileName() + ".debugfs-cwd");
        try {
            HostCommand.of("mke2fs", "-q", "-t", "ext4", "-F", "-L", "kosa8-root", "-N", Long.toString(inodes),
                            "-E", "root_owner=0:0", "-d", stage.toString(), raw.toString(), (size / (1 << 20)) + "M")
                    .logTo(log).run(KosaException.Kind.IMAGE, "import: mke2fs");
            writeScript(tree.meta(), script, values);
            Files.createDirectories(cwd);
            String out = HostCommand.of("debugfs", "-w", "-f", script.toString(), raw.toString()).in(cwd)
                    .logTo(log).run(KosaException.Kind.IMAGE, "import: debugfs (owners, modes, devices, xattrs)");
            checkDebugfs(out);
            HostCommand.of("qemu-img", "convert", "-O", "qcow2", raw.toString(), qcow2.toString())
                    .logTo(log).run(KosaException.Kind.IMAGE, "import: qemu-img convert");
        } finally {
            Files.deleteIfExists(raw);
            Files.deleteIfExists(script);
            if (Files.isDirectory(cwd)) {
                FileTrees.delete(cwd);
            }
            if (Files.isDirectory(values)) {
                FileTrees.delete(values);
            }
        }
        return size;
    }

    /**
     * The debugfs commands that give each path the owner, group and mode its layer said, make devices and set
     * extended attributes; a value too long to write escaped on debugfs's command line (its lines are cut at
     * 8 KiB) is written to a file in {@code values}, which {@code ea_set -f} reads.
     */
    static void writeScript(Map<String, RootTree.Meta> meta, Path script, Path values) throws IOException {
        int files = 0;
        try (BufferedWriter w = Files.newBufferedWriter(script, StandardCharsets.UTF_8)) {
            for (var e : meta.entrySet()) {
                String path = quote("/" + ROOTFS + (e.getKey().isEmpty() ? "" : "/" + e.getKey()));
                RootTree.Meta m = e.getValue();
                int type = switch (m.type()) {
                    case DIRECTORY -> 0040000;
                    case FILE, HARDLINK -> 0100000;
                    case SYMLINK -> 0120000;
                    case CHAR_DEVICE -> 0020000;
                    case BLOCK_DEVICE -> 0060000;
                    case FIFO -> 0010000;
                };
                String node = switch (m.type()) {
                    case CHAR_DEVICE -> " c " + m.devMajor() + " " + m.devMinor();
                    case BLOCK_DEVICE -> " b " + m.devMajor() + " " + m.devMinor();
                    case FIFO -> " p";
                    default -> null;
                };
                if (node != null) {
                    // debugfs's mknod makes its name in the current folder only
                    int slash = e.getKey().lastIndexOf('/');
                    String dir = "/" + ROOTFS + (slash < 0 ? "" : "/" + e.getKey().substring(0, slash));
                    line(w, "cd " + quote(dir));
                    line(w, "mknod " + quote(e.getKey().substring(slash + 1)) + node);
                    line(w, "cd /");
                }
                int mode = m.type() == TarEntry.Type.SYMLINK ? 0777 : m.mode();
                line(w, "sif " + path + " mode 0" + Integer.toOctalString(type | mode));
                line(w, "sif " + path + " uid " + m.uid());
                line(w, "sif " + path + " gid " + m.gid());
                for (var x : m.xattrs().entrySet()) {
                    if (!storable(x.getKey())) {
                        continue;
                    }
                    if (x.getValue().length <= INLINE_VALUE) {
                        line(w, "ea_set " + path + " " + quote(x.getKey()) + " " + escaped(x.getValue()));
                    } else {
                        Path f = Files.createDirectories(values).resolve("v" + files++);
                        Files.write(f, x.getValue());
                        line(w, "ea_set -f " + quote(f.toString()) + " " + path + " " + quote(x.getKey()));
                    }
                }
            }
        }
    }

    /**
     * Whether ext4 stores an extended attribute of this name: the {@code user.}, {@code trusted.} and
     * {@code security.} namespaces ({@code security.capability}, {@code security.selinux}…). Others ({@code
     * system.} ACLs, names of no namespace the kernel knows) are left out of the disk.
     */
    static boolean storable(String name) {
        return name.startsWith("user.") || name.startsWith("trusted.") || name.startsWith("security.");
    }

    /** A value as debugfs's {@code ea_set} reads it: in double quotes, every byte but a letter or digit {@code \ooo}. */
    static String escaped(byte[] value) {
        StringBuilder b = new StringBuilder(value.length * 2 + 2).append('"');
        for (byte x : value) {
            int c = x & 0xff;
            if (c < 0x80 && Character.isLetterOrDigit(c)) {
                b.append((char) c);
            } else {
                b.append('\\').append((char) ('0' + (c >> 6))).append((char) ('0' + ((c >> 3) & 7)))
                        .append((char) ('0' + (c & 7)));
            }
        }
        return b.append('"').toString();
    }

    /**
     * debugfs exits 0 whatever its commands did: a line of its output that is neither its banner nor the echo of
     * a command is a command's error (a path it could not find, an attribute that does not fit the inode), and
     * the disk would not be as the layers said.
     */
    static void checkDebugfs(String output) {
        List<String> errors = output.lines().filter(l -> !l.isBlank() && !l.startsWith("debugfs ")
                && !l.startsWith("debugfs: ") && !l.startsWith("Allocated inode: ")).limit(5).toList();
        if (!errors.isEmpty()) {
            throw new KosaException(KosaException.Kind.IMAGE, "import: debugfs could not write the image's disk as"
                    + " its layers say: " + String.join("; ", errors),
                    "the image holds something ext4 cannot store (an extended attribute over about 4 KiB?);"
                            + " the import log has every command");
        }
    }

    /** Writes one line of the script, refusing one debugfs would cut (and run the rest of as a command). */
    private static void line(BufferedWriter w, String text) throws IOException {
        int bytes = text.getBytes(StandardCharsets.UTF_8).length + 1;
        if (bytes > MAX_LINE || text.indexOf('\n') >= 0) {
            throw new KosaException(KosaException.Kind.IMAGE, "import: a path or attribute in the image is too long"
                    + " for kosa8's disk writer (" + bytes + " bytes on one debugfs line, at most " + MAX_LINE
                    + "): " + PaxHeader.printable(text),
                    "an image whose paths are over a few thousand bytes cannot be imported; rebuild it with shorter"
                            + " paths");
        }
        w.write(text);
        w.write('\n');
    }

    /** A path as debugfs reads one argument: in double quotes, a quote doubled. */
    static String quote(String path) {
        return "\"" + path.replace("\"", "\"\"") + "\"";
    }
}
