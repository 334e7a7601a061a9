package dev.kosa8.image;

import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The build context: the folder whose files {@code COPY} and {@code ADD} may
 * take, less what its {@code .dockerignore} excludes. Read on the host by
 * the daemon, which runs as the user who asked for the build; nothing outside
 * the folder is ever read: a source that leads out of it, by {@code ..} or a
 * symbolic link, is an error, and links found inside copied folders are
 * copied as links, never followed.
 */
public final class BuildContext {
    /** One file, folder or link a COPY takes, with where it goes in the image. */
    public record Entry(Path source, String destination, Type type, int mode, long size, String linkTarget) {
    }

    public enum Type { FILE, DIRECTORY, SYMLINK }

    /** Beyond this a COPY is too large to be meant (the context is read into the guest in one stream). */
    static final int MAX_ENTRIES = 200_000;

    private final Path root;
    private final DockerIgnore ignore;

    private BuildContext(Path root, DockerIgnore ignore) {
        this.root = root;
        this.ignore = ignore;
    }

    /** The context in {@code dir}, with its {@code .dockerignore} when it has one. */
    public static BuildContext open(Path dir) {
        Path root;
        try {
            root = dir.toRealPath();
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.USAGE, "the build context " + dir + " does not exist",
                    "give the folder that holds the files the Dockerfile copies");
        }
        if (!Files.isDirectory(root)) {
            throw new KosaException(KosaException.Kind.USAGE, "the build context " + dir + " is not a folder",
                    "give the folder that holds the files the Dockerfile copies");
        }
        Path file = root.resolve(".dockerignore");
        DockerIgnore ignore = DockerIgnore.NONE;
        if (Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            try {
                ignore = DockerIgnore.parse(Files.readString(file, StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new KosaException(KosaException.Kind.USAGE, "cannot read " + file + ": " + e.getMessage(), "");
            }
        }
        return new BuildContext(root, ignore);
    }

    public Path root() {
        return root;
    }

    /**
     * What a COPY takes, each entry with its place in the image, in a stable
     * order: each source (a path relative to the context, with {@code *},
     * {@code ?} and {@code [...]} wildcards) as Docker copies it: a folder's
     * contents into the destination, a file to the destination, or into it
     * when it ends with '/'. Refuses sources that match nothing (or only
     * what {@code .dockerignore} excludes) and sources outside the context.
     *
     * @param where names the instruction in errors ({@code Dockerfile line 7})
     */
    public List<Entry> select(List<String> sources, String destination, String where) {
        List<Entry> out = new ArrayList<>();
        boolean intoDirectory = destination.endsWith("/");
        List<Path> matched = new ArrayList<>();
        for (String s : sources) {
            List<Path> m = match(s, where);
            if (m.isEmpty()) {
                throw new KosaException(KosaException.Kind.USAGE, where + ": COPY source " + s
                        + " is not in the build context " + root + " (or .dockerignore excludes it)",
                        "name a file or folder inside the build context");
            }
            matched.addAll(m);
        }
        if (matched.size() > 1 && !intoDirectory) {
            throw new KosaException(KosaException.Kind.USAGE, where + ": several sources need a destination that "
                    + "is a folder, written with a trailing /", "end the destination with /");
        }
        for (Path p : matched) {
            Path real = inside(p, where);
            String rel = relative(p);
            if (Files.isDirectory(real)) {
                // the folder's contents, not the folder: the destination keeps its own owner and mode (COPY . /
                // must not change /), and is made with the usual 0755 when missing
                String dest = destination.endsWith("/") ? destination : destination + "/";
                walk(real, rel, dest, out);
            } else {
                String dest = intoDirectory ? destination + p.getFileName() : destination;
                out.add(entry(real, dest, rel));
            }
            if (out.size() > MAX_ENTRIES) {
                throw new KosaException(KosaException.Kind.USAGE, where + ": copies more than " + MAX_ENTRIES
                        + " entries", "copy fewer files, or exclude some in .dockerignore");
            }
        }
        return out;
    }

    /** The paths a source names, wildcards expanded, in order; none when it names nothing not ignored. */
    private List<Path> match(String source, String where) {
        String clean = source.replace('\\', '/');
        List<String> parts = new ArrayList<>();
        for (String e : clean.split("/")) {
            if (e.isEmpty() || e.equals(".")) {
                continue;
            }
            if (e.equals("..")) {
                if (parts.isEmpty()) {
                    throw outside(source, where);
                }
                parts.removeLast();
            } else {
                parts.add(e);
            }
        }
        List<Path> current = new ArrayList<>(List.of(root));
        for (String part : parts) {
            List<Path> next = new ArrayList<>();
            boolean glob = part.matches(".*[*?\\[].*");
            for (Path dir : current) {
                Path real = inside(dir, where);
                if (!glob) {
                    Path p = dir.resolve(part);
                    if (Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                        next.add(p);
                    }
                    continue;
                }
                if (!Files.isDirectory(real)) {
                    continue;
                }
                Pattern re = Pattern.compile(globRegex(part));
                try (DirectoryStream<Path> s = Files.newDirectoryStream(real)) {
                    List<Path> found = new ArrayList<>();
                    for (Path c : s) {
                        if (re.matcher(c.getFileName().toString()).matches()) {
                            found.add(dir.resolve(c.getFileName().toString()));
                        }
                    }
                    found.sort(null);
                    next.addAll(found);
                } catch (IOException e) {
                    throw unreadable(real, e);
                }
            }
            current = next;
        }
        current.removeIf(p -> ignore.excludes(relative(p)));
        return current;
    }

    private static String globRegex(String part) {
        StringBuilder re = new StringBuilder();
        for (int i = 0; i < part.length(); i++) {
            char c = part.charAt(i);
            switch (c) {
                case '*' -> re.append("[^/]*");
                case '?' -> re.append("[^/]");
                case '[' -> {
                    int end = part.indexOf(']', i + 2);
                    if (end < 0) {
                        re.append("\\[");
                    } else {
                        String cls = part.substring(i + 1, end);
                        re.append('[').append(cls.startsWith("!") ? "^" + cls.substring(1) : cls).append(']');
                        i = end;
                    }
                }
                default -> re.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return re.toString();
    }

    /** The real path of {@code p}, which must lie in the context (a link leading out is refused). */
    private Path inside(Path p, String where) {
        try {
            Path real = p.toRealPath();
            if (!real.startsWith(root)) {
                throw outside(relative(p), where);
            }
            return real;
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.USAGE, where + ": " + relative(p) + " cannot be read ("
                    + e.getMessage() + "); a symbolic link that leads nowhere is not copied", "");
        }
    }

    private KosaException outside(String source, String where) {
        return new KosaException(KosaException.Kind.USAGE, where + ": COPY source " + source
                + " is outside the build context " + root, "copy files from inside the build context only");
    }

    private String relative(Path p) {
        return DockerIgnore.clean(root.relativize(p.toAbsolutePath().normalize()).toString());
    }

    private void walk(Path dir, String rel, String dest, List<Entry> out) {
        List<Path> children = new ArrayList<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            s.forEach(children::add);
        } catch (IOException e) {
            throw unreadable(dir, e);
        }
        children.sort(null);
        for (Path c : children) {
            String name = c.getFileName().toString();
            String childRel = rel.isEmpty() ? name : rel + "/" + name;
            if (ignore.excludes(childRel)) {
                continue;
            }
            Entry e = entry(c, dest + name, childRel);
            out.add(e);
            if (out.size() > MAX_ENTRIES) {
                return;
            }
            if (e.type() == Type.DIRECTORY) {
                walk(c, childRel, dest + name + "/", out);
            }
        }
    }

    private Entry entry(Path p, String destination, String rel) {
        try {
            PosixFileAttributes a = Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            int mode = mode(a.permissions());
            if (a.isSymbolicLink()) {
                return new Entry(p, destination, Type.SYMLINK, 0777, 0, Files.readSymbolicLink(p).toString());
            }
            if (a.isDirectory()) {
                return new Entry(p, destination, Type.DIRECTORY, mode, 0, null);
            }
            if (!a.isRegularFile()) {
                throw new KosaException(KosaException.Kind.USAGE, rel + " in the build context is neither a file, "
                        + "a folder nor a link (a device, socket or FIFO)", "exclude it in .dockerignore");
            }
            return new Entry(p, destination, Type.FILE, mode, a.size(), null);
        } catch (IOException e) {
            throw unreadable(p, e);
        }
    }

    static int mode(Set<PosixFilePermission> perms) {
        int m = 0;
        for (PosixFilePermission p : perms) {
            m |= 1 << (8 - p.ordinal());
        }
        return m;
    }

    /**
     * What the entries are, as one hash: each one's destination, type, mode, link target and content. A COPY's
     * cache key includes it, so a changed file rebuilds the step and an untouched one does not.
     */
    public static String hash(List<Entry> entries) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (Entry e : entries) {
                md.update((e.destination() + "\0" + e.type() + "\0" + Integer.toOctalString(e.mode()) + "\0"
                        + (e.linkTarget() == null ? "" : e.linkTarget()) + "\0" + e.size() + "\0")
                        .getBytes(StandardCharsets.UTF_8));
                if (e.type() == Type.FILE) {
                    try (InputStream in = Files.newInputStream(e.source(), LinkOption.NOFOLLOW_LINKS)) {
                        int n;
                        while ((n = in.read(buf)) > 0) {
                            md.update(buf, 0, n);
                        }
                    }
                }
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot read a file of the build context: "
                    + e.getMessage(), "");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static KosaException unreadable(Path p, IOException e) {
        return new KosaException(KosaException.Kind.USAGE, "cannot read " + p + " in the build context: "
                + e.getMessage(), "check its permissions");
    }
}
