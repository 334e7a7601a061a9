package dev.kosa8.image.oci;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;

/**
 * The members of an image archive ({@link ImageArchive}): its regular files, kept under names kosa8 makes
 * ({@code m0}, {@code m1}…) when it is a tar, never the archive's own; a link between members ({@code docker save}
 * links layers it already wrote) is followed within the archive only.
 */
final class ArchiveMembers {
    private ArchiveMembers() {
    }

    /** The archive's regular files by their normalised names; links among them resolved within it. */
    static Map<String, Path> inTar(Path archive, Path scratch, ImportLimits limits, String what)
            throws IOException {
        Map<String, Path> out = new HashMap<>();
        Map<String, String> links = new HashMap<>();
        long total = 0;
        InputStream raw = new BufferedInputStream(Files.newInputStream(archive), 1 << 16);
        raw.mark(2);
        boolean gz = raw.read() == 0x1f && raw.read() == 0x8b;
        raw.reset();
        try (InputStream in = gz ? new GZIPInputStream(raw, 1 << 16) : raw) {
            TarReader r = new TarReader(in, limits, what);
            for (TarEntry e = r.next(); e != null; e = r.next()) {
                String name = String.join("/", RootTree.components(e.path(), what));
                switch (e.type()) {
                    case FILE -> {
                        total += e.size();
                        if (total > limits.maxArchiveBytes()) {
                            throw RootTree.bad(what, "its members hold more than " + limits.maxArchiveBytes()
                                    + " bytes");
                        }
                        Path f = scratch.resolve("m" + out.size());
                        try (OutputStream o = Files.newOutputStream(f, java.nio.file.StandardOpenOption.CREATE_NEW,
                                java.nio.file.StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
                            r.content().transferTo(o);
                        }
                        out.put(name, f);
                    }
                    case SYMLINK, HARDLINK -> {
                        String target = e.type() == TarEntry.Type.HARDLINK ? e.linkName()
                                : (name.contains("/") ? name.substring(0, name.lastIndexOf('/') + 1) : "")
                                        + e.linkName();
                        links.put(name, String.join("/", normalise(target, what)));
                    }
                    default -> {
                    }
                }
            }
        }
        for (var l : links.entrySet()) {
            String t = l.getValue();
            for (int hops = 0; links.containsKey(t) && hops < 8; hops++) {
                t = links.get(t);
            }
            Path f = out.get(t);
            if (f != null) {
                out.putIfAbsent(l.getKey(), f);
            }
        }
        return out;
    }

    /** A link's target resolved as a path inside the archive: {@code a/../b} is {@code b}; above the top is refused. */
    private static List<String> normalise(String path, String what) {
        if (path.startsWith("/")) {
            throw RootTree.bad(what, "a member links to " + path + ", outside the archive");
        }
        List<String> out = new ArrayList<>();
        for (String c : path.split("/")) {
            if (c.isEmpty() || c.equals(".")) {
                continue;
            }
            if (c.equals("..")) {
                if (out.isEmpty()) {
                    throw RootTree.bad(what, "a member links to " + path + ", outside the archive");
                }
                out.removeLast();
            } else {
                out.add(c);
            }
        }
        return out;
    }

    /** An OCI layout or docker-save folder: its regular files, never through a link. */
    static Map<String, Path> inFolder(Path dir) throws IOException {
        Map<String, Path> out = new HashMap<>();
        Path root = dir.toRealPath();
        try (var s = Files.walk(root)) {
            s.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS))
                    .forEach(p -> out.put(root.relativize(p).toString(), p));
        }
        return out;
    }

}
