package dev.kosa8.image.debian;

import dev.kosa8.host.AtomicFile;
import dev.kosa8.host.KosaException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The package list an image was built from, one {@link Locked} per line
 * ({@code name version architecture sha256 size archive filename}), sorted
 * by name, after {@code #} comment lines naming the suite and the signed
 * Release each archive had. Fetching from it needs no index and no
 * resolving: each file is fetched by its path and checked against the
 * SHA-256 written here, so a rebuild from it has the same bytes or fails.
 */
public record LockFile(List<String> comments, List<Locked> packages) {
    public static final String HEADER = "# kosa8 Debian package lock, format 1";

    public LockFile {
        comments = List.copyOf(comments);
        packages = packages.stream().sorted(Comparator.comparing(Locked::name)).toList();
    }

    public String text() {
        StringBuilder b = new StringBuilder(HEADER).append('\n');
        comments.forEach(c -> b.append("# ").append(c.replace('\n', ' ')).append('\n'));
        packages.forEach(p -> b.append(p.line()).append('\n'));
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
        if (lines.isEmpty() || !lines.getFirst().equals(HEADER)) {
            throw new KosaException(KosaException.Kind.USAGE, what + " is not a kosa8 package lock (its first line "
                    + "is not '" + HEADER + "')", "name a lock file an image build wrote");
        }
        List<String> comments = new ArrayList<>();
        List<Locked> out = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            String l = lines.get(i);
            if (l.startsWith("# ")) {
                comments.add(l.substring(2));
            } else if (!l.isBlank()) {
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
                out.add(new Locked(w[0], w[1], w[2], w[3], size, w[5], w[6]));
            }
        }
        return new LockFile(comments, out);
    }
}
