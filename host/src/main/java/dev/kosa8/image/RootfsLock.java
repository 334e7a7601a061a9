package dev.kosa8.image;

import dev.kosa8.image.debian.LockFile;
import dev.kosa8.image.debian.Locked;
import dev.kosa8.image.debian.Stanza;
import dev.kosa8.image.debian.Stanzas;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Whether the root filesystem holds exactly the packages of the lock kosa8's
 * archive client resolved: dpkg's status file in the tree, every package
 * installed ({@code install ok installed}), compared by name, version and
 * architecture. Only then is the lock kept beside the root disk as the
 * image's package list.
 */
final class RootfsLock {
    static final String FILE = "packages.lock";

    private RootfsLock() {
    }

    /** The differences, as "name version arch" lines prefixed with {@code +} (installed, not locked) or {@code -}. */
    static List<String> differences(LockFile lock, Path tree) throws IOException {
        TreeSet<String> installed = new TreeSet<>();
        for (Stanza s : Stanzas.parse(Files.readString(tree.resolve("var/lib/dpkg/status")), "dpkg's status")) {
            if (s.field("Status").orElse("").endsWith(" installed")) {
                installed.add(s.required("Package", "dpkg's status") + " " + s.required("Version", "dpkg's status")
                        + " " + s.required("Architecture", "dpkg's status"));
            }
        }
        TreeSet<String> locked = new TreeSet<>();
        for (Locked p : lock.packages()) {
            locked.add(p.name() + " " + p.version() + " " + p.architecture());
        }
        List<String> out = new ArrayList<>();
        installed.stream().filter(x -> !locked.contains(x)).forEach(x -> out.add("+" + x));
        locked.stream().filter(x -> !installed.contains(x)).forEach(x -> out.add("-" + x));
        return out;
    }
}
