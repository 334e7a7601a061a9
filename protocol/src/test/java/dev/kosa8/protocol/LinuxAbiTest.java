package dev.kosa8.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every number of both architectures' tables is the one that architecture's own C headers give: a file of static
 * assertions is compiled by each architecture's compiler (the host's gcc and Debian's cross compiler,
 * gcc-aarch64-linux-gnu, which ./run-tests installs), so a wrong value fails to compile, naming it.
 */
class LinuxAbiTest {
    @TempDir
    Path tmp;

    /** The C assertions of one table: each value against the header's macro, sizes and offsets against the types. */
    static String assertions(LinuxAbi abi) {
        List<String> checks = new ArrayList<>();
        String[][] same = {
            {"O_RDONLY", "" + LinuxAbi.O_RDONLY}, {"O_WRONLY", "" + LinuxAbi.O_WRONLY}, {"O_RDWR", "" + LinuxAbi.O_RDWR},
            {"O_CREAT", "" + LinuxAbi.O_CREAT}, {"O_EXCL", "" + LinuxAbi.O_EXCL}, {"O_NOCTTY", "" + LinuxAbi.O_NOCTTY},
            {"O_TRUNC", "" + LinuxAbi.O_TRUNC}, {"O_APPEND", "" + LinuxAbi.O_APPEND},
            {"O_NONBLOCK", "" + LinuxAbi.O_NONBLOCK}, {"O_DSYNC", "" + LinuxAbi.O_DSYNC},
            {"O_NOATIME", "" + LinuxAbi.O_NOATIME}, {"O_CLOEXEC", "" + LinuxAbi.O_CLOEXEC},
            {"O_SYNC", "" + LinuxAbi.O_SYNC}, {"O_PATH", "" + LinuxAbi.O_PATH},
            {"TIOCSWINSZ", "" + LinuxAbi.TIOCSWINSZ}, {"FIONREAD", "" + LinuxAbi.FIONREAD},
            {"O_DIRECT", "" + abi.oDirect()}, {"O_DIRECTORY", "" + abi.oDirectory()}, {"O_NOFOLLOW", "" + abi.oNofollow()},
            {"O_TMPFILE", "" + abi.oTmpfile()}, {"SYS_getdents64", "" + abi.sysGetdents64()},
            {"SYS_openat2", "" + abi.sysOpenat2()}, {"SYS_userfaultfd", "" + abi.sysUserfaultfd()},
            {"FICLONE", "" + LinuxAbi.FICLONE}, {"SEEK_DATA", "" + LinuxAbi.SEEK_DATA},
            {"SEEK_HOLE", "" + LinuxAbi.SEEK_HOLE}, {"ENXIO", "" + LinuxAbi.ENXIO}, {"ENOSPC", "" + LinuxAbi.ENOSPC},
            {"ENOSYS", "" + LinuxAbi.ENOSYS}, {"EOPNOTSUPP", "" + LinuxAbi.EOPNOTSUPP},
            {"sizeof(struct statx)", "" + LinuxAbi.STATX_SIZE}, {"sizeof(struct statfs)", "" + LinuxAbi.STATFS_SIZE},
            {"sizeof(struct flock)", "" + LinuxAbi.FLOCK_SIZE}, {"sizeof(struct open_how)", "" + LinuxAbi.OPEN_HOW_SIZE},
            {"offsetof(struct statfs, f_bavail)", "32"}, {"offsetof(struct statfs, f_fsid)", "56"},
            {"offsetof(struct statfs, f_namelen)", "64"}, {"offsetof(struct flock, l_start)", "8"},
            {"offsetof(struct flock, l_len)", "16"}, {"offsetof(struct flock, l_pid)", "24"},
        };
        for (String[] c : same) {
            // LinuxAbi's largest values are octal in the source; compare as decimal here
            checks.add("_Static_assert((long) (" + c[0] + ") == " + c[1] + "L, \"" + c[0].replace("\"", "")
                    + " is not " + c[1] + " on " + abi.arch() + "\");");
        }
        return """
                #define _GNU_SOURCE
                #include <errno.h>
                #include <fcntl.h>
                #include <stddef.h>
                #include <unistd.h>
                #include <linux/fs.h>
                #include <sys/ioctl.h>
                #include <sys/stat.h>
                #include <sys/syscall.h>
                #include <sys/vfs.h>
                #include <linux/openat2.h>
                """ + String.join("\n", checks) + "\n";
    }

    /**
     * The kernel's own open flags ({@code asm/fcntl.h}): the ones 9P carries. C libraries may differ: glibc's
     * O_LARGEFILE is 0 on 64-bit systems, where it is implied, and its header cannot be included beside this one.
     */
    static String kernelAssertions(LinuxAbi abi) {
        StringBuilder b = new StringBuilder("#include <asm/fcntl.h>\n");
        String[][] flags = {{"O_DIRECT", "" + abi.oDirect()}, {"O_LARGEFILE", "" + abi.oLargefile()},
            {"O_DIRECTORY", "" + abi.oDirectory()}, {"O_NOFOLLOW", "" + abi.oNofollow()},
            {"O_TMPFILE", "" + abi.oTmpfile()}};
        for (String[] f : flags) {
            b.append("_Static_assert((long) (").append(f[0]).append(") == ").append(f[1]).append("L, \"kernel's ")
                    .append(f[0]).append(" is not ").append(f[1]).append(" on ").append(abi.arch()).append("\");\n");
        }
        return b.toString();
    }

    /** Both files through {@code compiler}: what it said of those that failed, empty when both compiled. */
    private String compile(String compiler, LinuxAbi abi) throws Exception {
        StringBuilder failures = new StringBuilder();
        for (String[] file : new String[][] {{"libc", assertions(abi)}, {"kernel", kernelAssertions(abi)}}) {
            Path c = tmp.resolve(abi.arch() + "-" + file[0] + ".c");
            Files.writeString(c, file[1]);
            Process p = new ProcessBuilder(compiler, "-fsyntax-only", "-Wall", c.toString()).redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes());
            if (p.waitFor() != 0) {
                failures.append(out.isEmpty() ? "exit " + p.exitValue() : out);
            }
        }
        return failures.toString();
    }

    private static String compilerFor(String triple) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            if (Files.isExecutable(Path.of(dir, triple + "-gcc"))) {
                return Path.of(dir, triple + "-gcc").toString();
            }
        }
        throw new AssertionError("no " + triple + "-gcc on PATH: install Debian's gcc-" + triple.replace("_", "-")
                .replace("-linux-gnu", "") + "-linux-gnu (./run-tests does, as root)");
    }

    @Test
    void x8664sTableIsWhatX8664sHeadersSay() throws Exception {
        assertThat(compile(compilerFor("x86_64-linux-gnu"), LinuxAbi.X86_64)).isEmpty();
    }

    @Test
    void arm64sTableIsWhatArm64sHeadersSay() throws Exception {
        assertThat(compile(compilerFor("aarch64-linux-gnu"), LinuxAbi.AARCH64)).isEmpty();
    }

    @Test
    void eitherTableCompiledForTheOtherArchitectureFailsNamingWhatDiffers() throws Exception {
        // the check can fail: x86-64's numbers are wrong for arm64, and the compiler says which
        assertThat(compile(compilerFor("aarch64-linux-gnu"), LinuxAbi.X86_64))
                .contains("O_DIRECT is not", "O_DIRECTORY is not", "O_NOFOLLOW is not", "SYS_getdents64 is not");
        assertThat(compile(compilerFor("x86_64-linux-gnu"), LinuxAbi.AARCH64)).contains("O_DIRECT is not");
    }

    @Test
    void theJvmsArchitectureNamesPickTheirTables() {
        assertThat(LinuxAbi.of("amd64")).isSameAs(LinuxAbi.X86_64);
        assertThat(LinuxAbi.of("aarch64")).isSameAs(LinuxAbi.AARCH64);
        assertThat(LinuxAbi.of("riscv64").supported()).isFalse();
        assertThat(LinuxAbi.current().supported()).isTrue(); // kosa8 runs on one of the two
    }

    @Test
    void ninePsFlagsAreMovedToArm64sPlaces() {
        LinuxAbi a = LinuxAbi.AARCH64;
        assertThat(a.fromDotl(LinuxAbi.DOTL_DIRECTORY)).isEqualTo(040000);
        assertThat(a.fromDotl(LinuxAbi.DOTL_NOFOLLOW)).isEqualTo(0100000);
        assertThat(a.fromDotl(LinuxAbi.DOTL_DIRECT)).isEqualTo(0200000);
        assertThat(a.fromDotl(LinuxAbi.DOTL_LARGEFILE)).isEqualTo(0400000);
        assertThat(a.fromDotl(LinuxAbi.DOTL_SYNC)).isEqualTo(LinuxAbi.O_SYNC);
        assertThat(a.fromDotl(LinuxAbi.O_RDWR | LinuxAbi.O_CREAT | LinuxAbi.O_TRUNC))
                .isEqualTo(LinuxAbi.O_RDWR | LinuxAbi.O_CREAT | LinuxAbi.O_TRUNC);
    }

    /** On x86-64, 9P's encoding is the host's: every bit 9P defines keeps its place (SYNC gains DSYNC, as open does). */
    @Property(tries = 500)
    void onX8664NinePsFlagsAreTheHostsOwn(@ForAll int dotl) {
        int defined = 03 | 0100 | 0200 | 0400 | 01000 | 02000 | 04000 | 010000 | 040000 | 0100000 | 0200000
                | 0400000 | 01000000 | 02000000 | 04000000;
        int want = dotl & defined;
        if ((dotl & LinuxAbi.DOTL_SYNC) != 0) {
            want |= LinuxAbi.O_DSYNC;
        }
        assertThat(LinuxAbi.X86_64.fromDotl(dotl)).isEqualTo(want);
    }
}
