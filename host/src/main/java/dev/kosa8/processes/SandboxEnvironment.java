package dev.kosa8.processes;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.KosaException;
import dev.kosa8.host.RecordFile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * A sandbox's own environment variables, set through the API ({@code kosa8 env}) and merged into every command
 * it runs, attached or kept by the daemon: under the command's own variables, over the image's. Kept in
 * {@code environment.json} in the sandbox's directory (docs/files.md), so it outlives a daemon restart; a
 * rewind leaves it as it is, like the allow-list.
 */
public final class SandboxEnvironment {
    public static final String FILE = "environment.json";
    public static final int MAX_VARIABLES = 256;
    public static final int MAX_VALUE = 32 * 1024;
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,255}");

    /** The file's record. */
    public record Variables(Map<String, String> variables) {
        public Variables {
            variables = Map.copyOf(variables == null ? Map.of() : variables);
        }
    }

    private static final RecordFile<Variables> RECORD = new RecordFile<>("kosa8-environment", 1, "environment",
            Variables.class, new ObjectMapper(), RecordFile.Unchecked.REFUSE,
            "remove it and set the sandbox's variables again with `kosa8 env`");

    private SandboxEnvironment() {
    }

    /** The variables of the sandbox whose directory is {@code dir}, sorted by name; none when never set. */
    public static Map<String, String> read(Path dir) {
        Path f = dir.resolve(FILE);
        if (!Files.exists(f)) {
            return Map.of();
        }
        try {
            return new TreeMap<>(RECORD.read(f).variables());
        } catch (RecordFile.Damaged d) {
            throw new KosaException(KosaException.Kind.STATE, d.problem(), d.remedy());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + f, e);
        }
    }

    /** A fork gets its parent's variables: the file copied, when there is one. */
    public static void copy(Path fromDir, Path toDir) throws IOException {
        Path f = fromDir.resolve(FILE);
        if (Files.exists(f)) {
            Files.copy(f, toDir.resolve(FILE), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Sets and unsets variables (unset after set) and returns them all; every problem is named at once. */
    public static synchronized Map<String, String> change(Path dir, Map<String, String> set,
                                                          Collection<String> unset) {
        java.util.List<String> problems = new java.util.ArrayList<>();
        set.forEach((k, v) -> {
            if (!NAME.matcher(k).matches()) {
                problems.add("'" + k + "' is not a variable name (letters, digits and _, not starting with a digit)");
            }
            if (v.indexOf('\0') >= 0 || v.length() > MAX_VALUE) {
                problems.add(k + "'s value must have no NUL and at most " + MAX_VALUE + " characters");
            }
        });
        Map<String, String> next = new TreeMap<>(read(dir));
        next.putAll(set);
        unset.forEach(next::remove);
        if (next.size() > MAX_VARIABLES) {
            problems.add("a sandbox has at most " + MAX_VARIABLES + " variables of its own, and this makes "
                    + next.size());
        }
        if (!problems.isEmpty()) {
            throw new KosaException(KosaException.Kind.USAGE, "cannot set the sandbox's environment: "
                    + String.join("; ", problems), "");
        }
        try {
            RECORD.write(dir.resolve(FILE), new Variables(next));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + dir.resolve(FILE), e);
        }
        return next;
    }
}
