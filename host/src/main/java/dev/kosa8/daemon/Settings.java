package dev.kosa8.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.KosaException;
import dev.kosa8.processes.ProcessLimits;
import dev.kosa8.vm.JailProbe;
import dev.kosa8.vm.VmSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The host-side settings of the daemon, from {@code settings.json} in
 * kosa8's config folder (docs/files.md), each with a default; the daemon
 * reads them when it starts. Every value a guest can make the host spend is
 * bounded by one of them (docs/limits.md).
 *
 * @param jail          whether QEMU must run in its jail ({@link JailProbe.Mode}; default: where the host can)
 * @param streams       the commands and file transfers one sandbox may have under way at once
 * @param budget        a new sandbox's disk budget, checkpoint limits and console limit, which {@code create}
 *                      can change
 * @param processes     what the processes the daemon keeps for a sandbox may hold: how many run at once, the output
 *                      kept per process, the ended ones kept ({@code processes}, {@code processOutput},
 *                      {@code processRecords})
 */
public record Settings(JailProbe.Mode jail, int streams, Budget budget, ProcessLimits processes) {
    public static final String FILE = "settings.json";
    public static final int DEFAULT_STREAMS = 64;
    private static final Set<String> KNOWN = Set.of("jail", "consoleLimit", "streams", "diskBudget",
            "checkpointCount", "checkpointBytes", "processes", "processOutput", "processRecords");

    public static final Settings DEFAULTS = new Settings(JailProbe.Mode.AUTO, DEFAULT_STREAMS, Budget.DEFAULT,
            ProcessLimits.DEFAULT);

    /** The settings in {@code dir}'s settings.json; the defaults when there is none. */
    public static Settings load(Path dir) {
        Path file = dir.resolve(FILE);
        if (!Files.exists(file)) {
            return DEFAULTS;
        }
        JsonNode n;
        try {
            n = new ObjectMapper().readTree(file.toFile());
        } catch (IOException e) {
            throw bad(file, List.of("it is not JSON: " + e.getMessage()));
        }
        if (n == null || !n.isObject()) {
            throw bad(file, List.of("it must be one JSON object"));
        }
        List<String> problems = new ArrayList<>();
        for (Iterator<String> names = n.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!KNOWN.contains(name)) {
                problems.add("unknown setting \"" + name + "\" (known: " + String.join(", ", KNOWN.stream().sorted()
                        .toList()) + ")");
            }
        }
        JailProbe.Mode jail = DEFAULTS.jail();
        if (n.has("jail")) {
            try {
                jail = JailProbe.Mode.parse(n.get("jail").asText());
            } catch (KosaException e) {
                problems.add("\"jail\": " + e.getMessage() + "; " + e.suggestion());
            }
        }
        long console = bytes(n, "consoleLimit", Budget.DEFAULT.consoleBytes(), VmSpec.MIN_CONSOLE_LIMIT, problems);
        long streams = number(n, "streams", DEFAULTS.streams(), 1, 4096, problems);
        long disk = bytes(n, "diskBudget", Budget.DEFAULT.diskBytes(), Budget.MIN_DISK, problems);
        long count = number(n, "checkpointCount", Budget.DEFAULT.checkpointCount(), 1, 100_000, problems);
        long cpBytes = bytes(n, "checkpointBytes", Budget.DEFAULT.checkpointBytes(), 0, problems);
        long procs = number(n, "processes", ProcessLimits.DEFAULT.running(), 1, 4096, problems);
        long procOutput = bytes(n, "processOutput", ProcessLimits.DEFAULT.outputBytes(), ProcessLimits.MIN_OUTPUT,
                problems);
        long procRecords = number(n, "processRecords", ProcessLimits.DEFAULT.finishedKept(), 0, 4096, problems);
        if (!problems.isEmpty()) {
            throw bad(file, problems);
        }
        return new Settings(jail, (int) streams, new Budget(disk, (int) count, cpBytes, console),
                new ProcessLimits((int) procs, procOutput, (int) procRecords));
    }

    private static KosaException bad(Path file, List<String> problems) {
        return new KosaException(KosaException.Kind.USAGE, "cannot use " + file + ": " + String.join("; ", problems),
                "fix it (docs/files.md lists every setting), or remove it for the defaults");
    }

    private static long number(JsonNode n, String name, long dflt, long min, long max, List<String> problems) {
        if (!n.has(name)) {
            return dflt;
        }
        JsonNode v = n.get(name);
        if (!v.canConvertToLong() || v.asLong() < min || v.asLong() > max) {
            problems.add("\"" + name + "\" must be a whole number from " + min + " to " + max + ", not " + v);
            return dflt;
        }
        return v.asLong();
    }

    private static long bytes(JsonNode n, String name, long dflt, long min, List<String> problems) {
        if (!n.has(name)) {
            return dflt;
        }
        JsonNode v = n.get(name);
        try {
            long b = v.isNumber() ? v.asLong() : parseBytes(v.asText());
            if (b < min) {
                problems.add("\"" + name + "\" must be at least " + min + " bytes, not " + v);
                return dflt;
            }
            return b;
        } catch (NumberFormatException | ArithmeticException e) {
            problems.add("\"" + name + "\" must be a size such as 4M, 20G or a number of bytes, not " + v);
            return dflt;
        }
    }

    /** A size as people write it: 4096, 64K, 4M, 20G, 1T (powers of 1024; "iB" and "B" may follow). */
    public static long parseBytes(String s) {
        String v = s.trim().toUpperCase(Locale.ROOT).replace("IB", "").replace("B", "");
        if (v.isEmpty()) {
            throw new NumberFormatException("empty size");
        }
        int shift = switch (v.charAt(v.length() - 1)) {
            case 'K' -> 10;
            case 'M' -> 20;
            case 'G' -> 30;
            case 'T' -> 40;
            default -> 0;
        };
        String digits = shift == 0 ? v : v.substring(0, v.length() - 1).trim();
        long n = Long.parseLong(digits);
        if (n < 0 || n > (Long.MAX_VALUE >> shift)) {
            throw new ArithmeticException("too large");
        }
        return n << shift;
    }
}
