package dev.kosa8.image.debian;

import dev.kosa8.host.AtomicFile;
import dev.kosa8.host.KosaException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The package list an image was built from, one {@link Locked} per line
 * ({@code name version architecture sha256 size archive filename}), sorted
 * by name, after {@code #} comment lines naming the suite and the signed
 * Release each archive had. Fetching from it needs no index and no
 * resolving: each file is fetched by its path and checked against the
 * SHA-256 written here, so a rebuild from it has the same bytes or fails.
 *
 * <p>{@code packages} are the root filesystem's. A whole image's lock
 * ({@code kosa8 image lock}) also names the packages its other parts are
 * made from, each on a line of its own after {@code @PART } ({@link #PARTS}:
 * the kernel's package, busybox's); such a lock is format 2, which an older
 * kosa8 refuses by its first line rather than misreading. A lock without them
 * is written as format 1, as before.
 *
 * @param parts the packages of the image's other parts, by part ({@link #PARTS})
 */
public record LockFile(List<String> comments, List<Locked> packages, Map<String, Locked> parts) {
    public static final String HEADER = "# kosa8 Debian package lock, format 1";
    public static final String HEADER_2 = "# kosa8 Debian package lock, format 2";
    /** The parts besides the root filesystem that a whole image's lock names a package for. */
    public static final List<String> PARTS = List.of("kernel", "busybox");

    public LockFile {
        comments = List.copyOf(comments);
        packages = packages.stream().sorted(Comparator.comparing(Locked::name)).toList();
        if (!PARTS.containsAll(parts.keySet())) {
            throw new IllegalArgumentException("unknown parts " + parts.keySet());
        }
        Map<String, Locked> ordered = new LinkedHashMap<>();
        for (String p : PARTS) {
            if (parts.containsKey(p)) {
                ordered.put(p, parts.get(p));
            }
        }
        parts = Collections.unmodifiableMap(ordered);
    }

    /** The root filesystem's packages alone. */
    public LockFile(List<String> comments, List<Locked> packages) {
        this(comments, packages, Map.of());
    }

    /** This lock with the packages of the image's other parts. */
    public LockFile withParts(Map<String, Locked> parts) {
        return new LockFile(comments, packages, parts);
    }

    /** The package of {@code part} ({@link #PARTS}), if this lock names one. */
    public Optional<Locked> part(String part) {
        return Optional.ofNullable(parts.get(part));
    }

    /** Every package this lock names: the root filesystem's, then the other parts'. */
    public List<Locked> all() {
        List<Locked> all = new ArrayList<>(packages);
        all.addAll(parts.values());
        return all;
    }

    public String text() {
        StringBuilder b = new StringBuilder(parts.isEmpty() ? HEADER : HEADER_2).append('\n');
        comments.forEach(c -> b.append("# ").append(c.replace('\n', ' ')).append('\n'));
        packages.forEach(p -> b.append(p.line()).append('\n'));
        parts.forEach((part, p) -> b.append('@').append(part).append(' ').append(p.line()).append('\n'));
        return b.toString();
    }

    public void write(Path file) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        AtomicFile.write(file, text().getBytes(StandardCharsets.UTF_8));
    }

    public static LockFile read(Path file) {
        try {
            return parse(Files.readString(file), file.toString());
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot read the lock file " + file + ": " + e,
                    "name a lock file an image build wrote", e);
        }
    }

    public static LockFile parse(String text, String what) {
        List<String> lines = text.lines().toList();
        boolean two = !lines.isEmpty() && lines.getFirst().equals(HEADER_2);
        if (lines.isEmpty() || !(two || lines.getFirst().equals(HEADER))) {
            throw new KosaException(KosaException.Kind.USAGE, what + " is not a kosa8 package lock (its first line "
                    + "is not '" + HEADER + "' or '" + HEADER_2 + "')",
                    "name a lock file an image build or `kosa8 image lock` wrote");
        }
        List<String> comments = new ArrayList<>();
        List<Locked> out = new ArrayList<>();
        Map<String, Locked> parts = new LinkedHashMap<>();
        for (int i = 1; i < lines.size(); i++) {
            String l = lines.get(i);
            String part = null;
            if (two && l.startsWith("@")) {
                int space = l.indexOf(' ');
                part = space < 0 ? l.substring(1) : l.substring(1, space);
                if (!PARTS.contains(part) || parts.containsKey(part)) {
                    throw new KosaException(KosaException.Kind.USAGE, what + " line " + (i + 1) + " names the part '"
                            + part + "'" + (PARTS.contains(part) ? " a second time" : ", which is not one of " + PARTS),
                            "name a lock file `kosa8 image lock` wrote, unedited");
                }
                l = space < 0 ? "" : l.substring(space + 1);
            }
            if (l.startsWith("# ") && part == null) {
                comments.add(l.substring(2));
            } else if (!l.isBlank() || part != null) {
                String[] w = l.strip().split(" ");
                if (w.length != 7) {
                    throw new KosaException(KosaException.Kind.USAGE, what + " line " + (i + 1)
                            + " does not have 7 words", "name a lock file an image build wrote, unedited");
                }
                long size;
                try {
                    size = Long.parseLong(w[4]);
                } catch (NumberFormatException e) {
                    throw new KosaException(KosaException.Kind.USAGE, what + " line " + (i + 1) + " has a bad size",
                            "name a lock file an image build wrote, unedited");
                }
                Locked p;
                try {
                    p = new Locked(w[0], w[1], w[2], w[3], size, w[5], w[6]);
                } catch (KosaException e) {
                    throw new KosaException(KosaException.Kind.USAGE, what + " line " + (i + 1) + " is not a package "
                            + "entry (a bad name, version, hash or path)", "name a lock file an image build wrote, unedited");
                }
                if (part == null) {
                    out.add(p);
                } else {
                    parts.put(part, p);
                }
            }
        }
        return new LockFile(comments, out, parts);
    }
}
