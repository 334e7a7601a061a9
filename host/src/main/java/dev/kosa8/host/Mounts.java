package dev.kosa8.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Which mount a path lies on, from {@code /proc/self/mountinfo} (proc(5)):
 * the mount whose mount point is the path's longest leading part. Read for
 * {@code kosa8 doctor}, which warns of folders on Windows drives under WSL.
 */
public final class Mounts {
    /** One mount: where, its file system's type, its source and its file system's options as the kernel names them. */
    public record Mount(String point, String type, String source, String superOptions) {
        /**
         * A Windows drive or share as WSL mounts it: DrvFs, over 9p (its source the drive, {@code C:\}, or
         * {@code drvfs}; its options {@code aname=drvfs;...}, a share's too) or, in newer WSL, virtiofs.
         */
        public boolean windowsDrive() {
            return type.equals("drvfs") || (type.equals("9p") || type.equals("virtiofs"))
                    && (source.startsWith("drvfs") || source.matches("[A-Za-z]:.*")
                    || superOptions.contains("aname=drvfs"));
        }
    }

    private Mounts() {
    }

    /** The mount {@code path} (absolute, links resolved) lies on, per {@code mountinfo}'s text; empty if none parses. */
    public static Optional<Mount> of(String path, String mountinfo) {
        Mount best = null;
        for (String line : mountinfo.lines().toList()) {
            String[] f = line.split(" ");
            int dash = java.util.Arrays.asList(f).indexOf("-");
            // id parent major:minor root point options [optional fields...] - type source super-options
            if (f.length < 5 || dash < 6 || dash + 2 >= f.length) {
                continue;
            }
            String point = unescape(f[4]);
            boolean under = point.equals("/") || path.equals(point) || path.startsWith(point + "/");
            if (under && (best == null || point.length() >= best.point().length())) {
                // a later mount on the same point hides the earlier
                best = new Mount(point, f[dash + 1], unescape(f[dash + 2]), dash + 3 < f.length ? f[dash + 3] : "");
            }
        }
        return Optional.ofNullable(best);
    }

    /** The mount this host's {@code path} lies on; empty when it or mountinfo cannot be read. */
    public static Optional<Mount> host(Path path) {
        try {
            Path p = path;
            while (p != null && !Files.exists(p)) {
                p = p.getParent();
            }
            if (p == null) {
                return Optional.empty();
            }
            return of(p.toRealPath().toString(), Files.readString(Path.of("/proc/self/mountinfo")));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** mountinfo writes space, tab, newline and backslash as octal escapes ({@code \040}). */
    static String unescape(String s) {
        if (s.indexOf('\\') < 0) {
            return s;
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 3 < s.length() && s.substring(i + 1, i + 4).matches("[0-7]{3}")) {
                b.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
