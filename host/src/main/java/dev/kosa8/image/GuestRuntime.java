package dev.kosa8.image;

import dev.kosa8.host.FileTrees;
import dev.kosa8.host.HostCommand;
import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * kosa8's own files for a guest whose root is not kosa8's Debian image: the
 * agent's Java runtime (jlink'ed {@code java.base} and its CDS archive, as on
 * kosa8's own root) with the C library it was linked against, taken from the
 * host, so the agent depends on nothing of the image (its libc, if any, its
 * shell, its tools). The guest's init mounts them read-only at
 * {@code /run/kosa8/sys}, and the agent's launcher starts Java through this
 * C library's own loader ({@code lib/ld-linux-x86-64.so.2 --library-path lib}).
 * Made once per JDK and host C library, under {@code images/guest-runtime/KEY/}.
 */
public final class GuestRuntime {
    /** The loader, as the launcher names it. */
    public static final String LOADER = "ld-linux-x86-64.so.2";
    private static final Pattern LDD = Pattern.compile("=>\\s+(/\\S+)\\s+\\(|^\\s*(/\\S+)\\s+\\(");

    private GuestRuntime() {
    }

    /** The folder holding {@code jre/} and {@code lib/}, made if missing. */
    public static synchronized Path ensure(Path images, Path log) throws IOException {
        JavaRuntime java = JavaRuntime.current();
        Path loader = Path.of("/lib64", LOADER).toRealPath();
        String key = hash(java.version() + "\n" + loader + "\n" + Files.size(loader) + "\n"
                + String.join(" ", RootfsPart.CDS_DUMP_OPTIONS));
        Path dir = images.resolve("guest-runtime").resolve(key);
        if (Files.isDirectory(dir)) {
            return dir;
        }
        Files.createDirectories(dir.getParent());
        Path partial = Files.createTempDirectory(dir.getParent(), ".partial-");
        try {
            Path jre = partial.resolve("jre");
            HostCommand.of(java.jlink().toString(), "--add-modules", "java.base", "--strip-debug",
                            "--no-header-files", "--no-man-pages", "--output", jre.toString())
                    .logTo(log).run(KosaException.Kind.IMAGE, "guest runtime: jlink");
            List<String> dump = new ArrayList<>(List.of(jre.resolve("bin/java").toString()));
            dump.addAll(RootfsPart.CDS_DUMP_OPTIONS);
            dump.add("-Xshare:dump");
            HostCommand.of(dump).logTo(log).run(KosaException.Kind.IMAGE, "guest runtime: CDS archive");
            Path lib = Files.createDirectories(partial.resolve("lib"));
            for (Path so : libraries(jre, log)) {
                Files.copy(so, lib.resolve(so.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
            Files.copy(loader, lib.resolve(LOADER), StandardCopyOption.REPLACE_EXISTING);
            Files.move(partial, dir, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            if (Files.exists(partial)) {
                FileTrees.delete(partial);
            }
        }
        return dir;
    }

    /** The host's shared libraries the runtime's programs and libraries need, outside the runtime itself. */
    private static List<Path> libraries(Path jre, Path log) throws IOException {
        List<String> objects = new ArrayList<>(List.of(jre.resolve("bin/java").toString()));
        try (var s = Files.walk(jre.resolve("lib"))) {
            s.filter(p -> p.getFileName().toString().endsWith(".so")).forEach(p -> objects.add(p.toString()));
        }
        TreeSet<Path> out = new TreeSet<>();
        for (String o : objects) {
            String ldd = HostCommand.of("ldd", o).run(KosaException.Kind.IMAGE, "guest runtime: ldd " + o);
            for (String line : ldd.split("\n")) {
                Matcher m = LDD.matcher(line);
                if (m.find()) {
                    Path p = Path.of(m.group(1) != null ? m.group(1) : m.group(2));
                    if (!p.startsWith(jre) && !p.getFileName().toString().startsWith("ld-linux")) {
                        out.add(p);
                    }
                }
            }
        }
        return List.copyOf(out);
    }

    private static String hash(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(s.getBytes(StandardCharsets.UTF_8))).substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
