/*
 * A benchmark run's machine-readable result: one JSON file per run under bench/results/, written by every bench
 * program (in process: the launcher finds this file beside theirs) and by the bench scripts through bench/lib.sh
 * (`bench_row`, `bench_write`, which run this file's main). bench/ab.sh reads two sets of them with `compare`.
 *
 *   java bench/BenchResult.java write BENCHMARK ROWS_FILE [KEY=VALUE...]   (rows: one a line, tab-separated KEY=VALUE)
 *   java bench/BenchResult.java compare A.json... -- B.json...             (prints a Markdown table of B against A)
 *
 * A file holds: the benchmark's name, the command that reproduces it (KOSA8_BENCH_COMMAND), when it ran, the commit
 * of the build it measured (KOSA8_BENCH_BUILD's HEAD, and whether its tracked files differed from it), the host's
 * facts (cores, CPU, memory, kernel, QEMU, Java, the accelerator kosa8 probed, the load average before and after),
 * and every row: its figure and the samples it came from, its baseline measured in the same run and that
 * baseline's samples, the ratio between them (which way round is said in the row), and the goal. Depends on
 * nothing but the JDK, so that a bench program run without kosa8's jar (bench/WakeTrace.java) can use it too.
 */
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

public final class BenchResult {
    /** Which way a figure improves. */
    public enum Better {
        LOWER, HIGHER;

        String json() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** How a row's ratio is formed from its figure and its baseline. */
    public enum Ratio {
        FIGURE_OVER_BASELINE("figure / baseline"), BASELINE_OVER_FIGURE("baseline / figure");

        final String text;

        Ratio(String text) {
            this.text = text;
        }

        static Ratio parse(String s) {
            for (Ratio r : values()) {
                if (r.text.replace(" ", "").equals(s.replace(" ", ""))) {
                    return r;
                }
            }
            throw new IllegalArgumentException("ratio must be figure/baseline or baseline/figure, not " + s);
        }
    }

    /**
     * One figure of a run. {@code figure} is what the benchmark quotes (a median of {@code samples} unless the
     * benchmark says otherwise, e.g. a p99 over all requests); {@code baseline} likewise of {@code baselineSamples};
     * either list may be empty where the benchmark keeps no samples. No baseline: {@code baselineName} says why.
     */
    public record Row(String name, String unit, Better better, double figure, List<Double> samples,
                      String baselineName, Double baseline, List<Double> baselineSamples, Ratio ratioIs, String goal) {
        public Row {
            if (name == null || name.isBlank() || unit == null) {
                throw new IllegalArgumentException("a row needs a name and a unit");
            }
            samples = List.copyOf(samples);
            baselineSamples = List.copyOf(baselineSamples);
        }

        /** A row whose figure is the median of its samples. */
        public static Row of(String name, String unit, Better better, List<? extends Number> samples) {
            List<Double> s = doubles(samples);
            return new Row(name, unit, better, median(s), s, null, null, List.of(), Ratio.FIGURE_OVER_BASELINE, null);
        }

        /** A row whose figure is given (a percentile, or a single measurement). */
        public static Row of(String name, String unit, Better better, double figure, List<? extends Number> samples) {
            return new Row(name, unit, better, figure, doubles(samples), null, null, List.of(),
                    Ratio.FIGURE_OVER_BASELINE, null);
        }

        /** The baseline measured in the same run: the median of its samples. */
        public Row baseline(String what, List<? extends Number> samples, Ratio ratio) {
            List<Double> s = doubles(samples);
            return new Row(name, unit, better, figure, this.samples, what, median(s), s, ratio, goal);
        }

        /** The baseline measured in the same run, given as one figure (with the samples it came from, if any). */
        public Row baseline(String what, double value, List<? extends Number> samples, Ratio ratio) {
            return new Row(name, unit, better, figure, this.samples, what, value, doubles(samples), ratio, goal);
        }

        /** No baseline in this run, and why (e.g. "the other build, in bench/ab.sh"). */
        public Row noBaseline(String why) {
            return new Row(name, unit, better, figure, samples, why, null, List.of(), ratioIs, goal);
        }

        public Row goal(String text) {
            return new Row(name, unit, better, figure, samples, baselineName, baseline, baselineSamples, ratioIs, text);
        }

        /** The ratio of figure and baseline as {@link #ratioIs} says, or null without a baseline. */
        public Double ratio() {
            if (baseline == null || baseline == 0 || figure == 0) {
                return null;
            }
            return ratioIs == Ratio.FIGURE_OVER_BASELINE ? figure / baseline : baseline / figure;
        }
    }

    private final String benchmark;
    // when the bench script began (bench/lib.sh's bench_init), else when this object was made
    private final Instant started = System.getenv("KOSA8_BENCH_STARTED") != null
            ? Instant.parse(System.getenv("KOSA8_BENCH_STARTED")) : Instant.now();
    private final double[] loadStart = System.getenv("KOSA8_BENCH_LOAD") != null
            ? loadAverage(System.getenv("KOSA8_BENCH_LOAD")) : loadAverage();
    private final List<Row> rows = new ArrayList<>();
    private final Map<String, String> facts = new LinkedHashMap<>();

    public BenchResult(String benchmark) {
        if (!benchmark.matches("[a-z0-9-]+")) {
            throw new IllegalArgumentException("a benchmark's name is lower case, digits and dashes: " + benchmark);
        }
        this.benchmark = benchmark;
    }

    public BenchResult add(Row row) {
        rows.add(row);
        return this;
    }

    /** A host fact the benchmark knows better than the defaults (e.g. "accelerator" for a run that boots no VM). */
    public BenchResult fact(String key, String value) {
        facts.put(key, value);
        return this;
    }

    /**
     * Writes the result: to KOSA8_BENCH_RESULT if set (bench/ab.sh names each run's file), else to
     * bench/results/BENCHMARK-DATE-COMMIT.json of the bench's checkout (KOSA8_BENCH_REPO, else the current
     * directory). Says where on stderr and returns the path.
     */
    public Path write() {
        Instant done = Instant.now();
        Path build = Path.of(env("KOSA8_BENCH_BUILD", env("KOSA8_BENCH_REPO", ".")));
        String commit = git(build, "rev-parse", "HEAD");
        boolean dirty = !git(build, "status", "--porcelain", "--untracked-files=no").isEmpty();
        String explicit = System.getenv("KOSA8_BENCH_RESULT");
        Path file;
        if (explicit != null && !explicit.isBlank()) {
            file = Path.of(explicit);
        } else {
            String stamp = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC).format(done);
            file = Path.of(env("KOSA8_BENCH_REPO", "."), "bench", "results",
                    benchmark + "-" + stamp + "-" + (commit.length() >= 7 ? commit.substring(0, 7) : "unknown") + ".json");
        }
        Json j = new Json();
        j.open('{');
        j.field("schema", "kosa8-bench-result/1");
        j.field("benchmark", benchmark);
        j.field("command", env("KOSA8_BENCH_COMMAND", ProcessHandle.current().info().commandLine().orElse("?")));
        j.field("started", started.truncatedTo(ChronoUnit.SECONDS).toString());
        j.field("date", done.truncatedTo(ChronoUnit.SECONDS).toString());
        j.field("commit", commit.isEmpty() ? null : commit);
        j.field("dirty", dirty);
        String harness = git(Path.of(env("KOSA8_BENCH_REPO", ".")), "rev-parse", "HEAD");
        if (!harness.equals(commit)) {
            j.field("benchCommit", harness.isEmpty() ? null : harness); // the bench's own code, when it measured another build
        }
        j.key("host");
        j.open('{');
        j.field("cores", Runtime.getRuntime().availableProcessors());
        j.field("cpu", cpuModel());
        j.field("memoryMib", memoryMib());
        j.field("kernel", System.getProperty("os.version"));
        j.field("qemu", facts.getOrDefault("qemu", firstLine("qemu-system-x86_64", "--version")));
        j.field("java", System.getProperty("java.version"));
        j.field("accelerator", facts.getOrDefault("accelerator", accelerator()));
        j.numbers("loadAverageBefore", loadStart);
        j.numbers("loadAverageAfter", loadAverage());
        facts.forEach((k, v) -> {
            if (!k.equals("accelerator") && !k.equals("qemu")) {
                j.field(k, v);
            }
        });
        j.close('}');
        j.key("rows");
        j.open('[');
        for (Row r : rows) {
            j.open('{');
            j.field("name", r.name());
            j.field("unit", r.unit());
            j.field("better", r.better().json());
            j.field("figure", r.figure());
            j.numbers("samples", r.samples());
            j.field("baselineName", r.baselineName());
            j.field("baseline", r.baseline());
            j.numbers("baselineSamples", r.baselineSamples());
            j.field("ratio", r.ratio());
            j.field("ratioIs", r.baseline() == null ? null : r.ratioIs().text);
            j.field("goal", r.goal());
            j.close('}');
        }
        j.close(']');
        j.close('}');
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            Files.writeString(tmp, j.text() + "\n");
            Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the result " + file, e);
        }
        System.err.println("result: " + file);
        return file;
    }

    // ---------------------------------------------------------------- for the bench scripts and bench/ab.sh

    public static void main(String[] args) throws Exception {
        if (args.length >= 3 && args[0].equals("write")) {
            BenchResult r = new BenchResult(args[1]);
            for (String line : Files.readAllLines(Path.of(args[2]))) {
                if (!line.isBlank()) {
                    r.add(parseRow(line));
                }
            }
            for (int i = 3; i < args.length; i++) {
                int eq = args[i].indexOf('=');
                r.fact(args[i].substring(0, eq), args[i].substring(eq + 1));
            }
            r.write();
        } else if (args.length >= 4 && args[0].equals("compare") && List.of(args).contains("--")) {
            int sep = List.of(args).indexOf("--");
            Compare.print(List.of(args).subList(1, sep), List.of(args).subList(sep + 1, args.length));
        } else {
            System.err.println("usage: java bench/BenchResult.java write BENCHMARK ROWS_FILE [KEY=VALUE...]\n"
                    + "       java bench/BenchResult.java compare A.json... -- B.json...");
            System.exit(2);
        }
    }

    /**
     * A row as bench/lib.sh's bench_row writes it: tab-separated KEY=VALUE, keys name, unit, better (lower or
     * higher), figure (default: the median of samples), samples (space-separated), baseline_name, baseline
     * (default: the median of baseline_samples), baseline_samples, ratio (figure/baseline or baseline/figure),
     * goal.
     */
    static Row parseRow(String line) {
        Map<String, String> f = new LinkedHashMap<>();
        for (String field : line.split("\t")) {
            int eq = field.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("a row's fields are KEY=VALUE, not '" + field + "' in: " + line);
            }
            f.put(field.substring(0, eq), field.substring(eq + 1));
        }
        List<Double> samples = numbers(f.getOrDefault("samples", ""));
        List<Double> baseSamples = numbers(f.getOrDefault("baseline_samples", ""));
        String figure = f.get("figure"); // neither figure nor samples: a figure the run could not read, null
        Better better = Better.valueOf(f.getOrDefault("better", "lower").toUpperCase(Locale.ROOT));
        Row r = Row.of(f.get("name"), f.getOrDefault("unit", ""), better,
                figure != null ? Double.parseDouble(figure) : median(samples), samples);
        Ratio ratio = Ratio.parse(f.getOrDefault("ratio", "figure/baseline"));
        if (f.containsKey("baseline")) {
            r = r.baseline(f.get("baseline_name"), Double.parseDouble(f.get("baseline")), baseSamples, ratio);
        } else if (!baseSamples.isEmpty()) {
            r = r.baseline(f.get("baseline_name"), baseSamples, ratio);
        } else if (f.containsKey("baseline_name")) {
            r = r.noBaseline(f.get("baseline_name"));
        }
        return f.containsKey("goal") ? r.goal(f.get("goal")) : r;
    }

    // ---------------------------------------------------------------- helpers

    public static double median(List<? extends Number> values) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Double> s = new ArrayList<>(doubles(values));
        Collections.sort(s);
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    static List<Double> doubles(List<? extends Number> values) {
        return values.stream().map(Number::doubleValue).toList();
    }

    static List<Double> numbers(String spaced) {
        return spaced.isBlank() ? List.of()
                : List.of(spaced.strip().split("\\s+")).stream().map(Double::parseDouble).toList();
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }

    private static String git(Path dir, String... args) {
        List<String> cmd = new ArrayList<>(List.of("git", "-C", dir.toString()));
        cmd.addAll(List.of(args));
        return run(cmd);
    }

    private static String firstLine(String... cmd) {
        return run(List.of(cmd)).lines().findFirst().orElse(null);
    }

    /** A command's standard output, stripped; empty if it cannot run or fails. */
    private static String run(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            String out = new String(p.getInputStream().readAllBytes()).strip();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0 ? out : "";
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    private static String cpuModel() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                    .map(l -> l.substring(l.indexOf(':') + 1).strip()).findFirst().orElse(null);
        } catch (IOException e) {
            return null;
        }
    }

    private static Long memoryMib() {
        try {
            return Files.readAllLines(Path.of("/proc/meminfo")).stream().filter(l -> l.startsWith("MemTotal:"))
                    .map(l -> Long.parseLong(l.replaceAll("\\D", "")) / 1024).findFirst().orElse(null);
        } catch (IOException e) {
            return null;
        }
    }

    private static double[] loadAverage() {
        try {
            return loadAverage(Files.readString(Path.of("/proc/loadavg")));
        } catch (IOException e) {
            return new double[0];
        }
    }

    /** The 1, 5 and 15 minute load averages at the start of a /proc/loadavg line. */
    private static double[] loadAverage(String line) {
        try {
            String[] f = line.strip().split("\\s+");
            return new double[] {Double.parseDouble(f[0]), Double.parseDouble(f[1]), Double.parseDouble(f[2])};
        } catch (RuntimeException e) {
            return new double[0];
        }
    }

    /**
     * What kosa8 runs guests under here: the probe's cached choice in the kosa8 home of the environment
     * (KOSA8_HOME, else the XDG cache), else what /dev/kvm's absence already says.
     */
    private static String accelerator() {
        String home = System.getenv("KOSA8_HOME");
        Path cache = home != null && !home.isBlank() ? Path.of(home, "cache")
                : Path.of(env("XDG_CACHE_HOME", System.getProperty("user.home") + "/.cache"), "kosa8");
        try {
            String json = Files.readString(cache.resolve("accelerator.json"));
            var m = java.util.regex.Pattern.compile("\"accelerator\"\\s*:\\s*\"([A-Za-z]+)\"").matcher(json);
            if (m.find()) {
                return m.group(1).toLowerCase(Locale.ROOT);
            }
        } catch (IOException e) {
            // not probed in this home
        }
        return Files.exists(Path.of("/dev/kvm")) ? "not probed yet (/dev/kvm present)" : "tcg (no /dev/kvm)";
    }

    /** Just enough JSON writing for this file's one shape; numbers as Java prints them, NaN and infinities as null. */
    static final class Json {
        private final StringBuilder out = new StringBuilder();
        private final List<Boolean> first = new ArrayList<>();
        private boolean afterKey;

        void open(char c) {
            comma();
            out.append(c);
            first.add(true);
        }

        void close(char c) {
            first.removeLast();
            out.append('\n').append("  ".repeat(first.size())).append(c);
        }

        void key(String k) {
            comma();
            out.append(quote(k)).append(": ");
            afterKey = true;
        }

        void field(String k, Object v) {
            key(k);
            afterKey = false;
            out.append(value(v));
        }

        void numbers(String k, List<Double> v) {
            key(k);
            afterKey = false;
            out.append('[').append(String.join(", ", v.stream().map(Json::value).toList())).append(']');
        }

        void numbers(String k, double[] v) {
            List<Double> l = new ArrayList<>();
            for (double d : v) {
                l.add(d);
            }
            numbers(k, l);
        }

        private void comma() {
            if (afterKey) {
                afterKey = false;
                return;
            }
            if (!first.isEmpty()) {
                if (!first.getLast()) {
                    out.append(',');
                }
                first.set(first.size() - 1, false);
                out.append('\n').append("  ".repeat(first.size()));
            }
        }

        static String value(Object v) {
            if (v == null) {
                return "null";
            }
            if (v instanceof Double d) {
                if (d.isNaN() || d.isInfinite()) {
                    return "null";
                }
                return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString(d.longValue())
                        : Double.toString(Math.round(d * 1e6) / 1e6);
            }
            if (v instanceof Number || v instanceof Boolean) {
                return v.toString();
            }
            return quote(v.toString());
        }

        static String quote(String s) {
            StringBuilder b = new StringBuilder("\"");
            for (char c : s.toCharArray()) {
                switch (c) {
                    case '"' -> b.append("\\\"");
                    case '\\' -> b.append("\\\\");
                    case '\n' -> b.append("\\n");
                    case '\t' -> b.append("\\t");
                    case '\r' -> b.append("\\r");
                    default -> {
                        if (c < 0x20) {
                            b.append(String.format("\\u%04x", (int) c));
                        } else {
                            b.append(c);
                        }
                    }
                }
            }
            return b.append('"').toString();
        }

        String text() {
            return out.toString();
        }
    }

    /** Just enough JSON reading for the files {@link #write} makes: objects, arrays, strings, numbers, literals. */
    static final class JsonReader {
        private final String s;
        private int i;

        private JsonReader(String s) {
            this.s = s;
        }

        static Object parse(String text) {
            JsonReader r = new JsonReader(text);
            Object v = r.value();
            r.space();
            if (r.i != text.length()) {
                throw r.error("text after the value");
            }
            return v;
        }

        private Object value() {
            space();
            if (i >= s.length()) {
                throw error("the text ends where a value should be");
            }
            char c = s.charAt(i);
            switch (c) {
                case '{' -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    i++;
                    space();
                    if (peek('}')) {
                        return m;
                    }
                    do {
                        space();
                        String k = string();
                        space();
                        expect(':');
                        m.put(k, value());
                        space();
                    } while (peek(','));
                    expect('}');
                    return m;
                }
                case '[' -> {
                    List<Object> l = new ArrayList<>();
                    i++;
                    space();
                    if (peek(']')) {
                        return l;
                    }
                    do {
                        l.add(value());
                        space();
                    } while (peek(','));
                    expect(']');
                    return l;
                }
                case '"' -> {
                    return string();
                }
                default -> {
                    int start = i;
                    while (i < s.length() && "{}[],: \n\t\r".indexOf(s.charAt(i)) < 0) {
                        i++;
                    }
                    String word = s.substring(start, i);
                    return switch (word) {
                        case "null" -> null;
                        case "true" -> Boolean.TRUE;
                        case "false" -> Boolean.FALSE;
                        default -> {
                            try {
                                yield Double.parseDouble(word);
                            } catch (NumberFormatException e) {
                                throw error("not a JSON value: " + word);
                            }
                        }
                    };
                }
            }
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (i < s.length() && s.charAt(i) != '"') {
                char c = s.charAt(i++);
                if (c == '\\') {
                    char e = s.charAt(i++);
                    switch (e) {
                        case 'n' -> b.append('\n');
                        case 't' -> b.append('\t');
                        case 'r' -> b.append('\r');
                        case 'b' -> b.append('\b');
                        case 'f' -> b.append('\f');
                        case 'u' -> {
                            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                            i += 4;
                        }
                        default -> b.append(e);
                    }
                } else {
                    b.append(c);
                }
            }
            expect('"');
            return b.toString();
        }

        private boolean peek(char c) {
            if (i < s.length() && s.charAt(i) == c) {
                i++;
                return true;
            }
            return false;
        }

        private void expect(char c) {
            if (!peek(c)) {
                throw error("expected '" + c + "'");
            }
        }

        private void space() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private IllegalArgumentException error(String what) {
            return new IllegalArgumentException("not a bench result (" + what + " at character " + i + ")");
        }
    }

    /** bench/ab.sh's table: each row's figure on A and on B (medians over each side's runs), B / A, and each side's own ratio. */
    static final class Compare {
        record Side(String commit, List<Map<String, Object>> runs) {
        }

        @SuppressWarnings("unchecked")
        static Side load(List<String> files) throws IOException {
            List<Map<String, Object>> runs = new ArrayList<>();
            String commit = null;
            for (String f : files) {
                Map<String, Object> run = (Map<String, Object>) JsonReader.parse(Files.readString(Path.of(f)));
                runs.add(run);
                Object c = run.get("commit");
                String shortC = c == null ? "?" : c.toString().substring(0, Math.min(10, c.toString().length()))
                        + (Boolean.TRUE.equals(run.get("dirty")) ? "+changes" : "");
                commit = commit == null ? shortC : commit;
            }
            return new Side(commit, runs);
        }

        @SuppressWarnings("unchecked")
        static Map<String, List<Map<String, Object>>> rowsByName(Side side) {
            Map<String, List<Map<String, Object>>> out = new LinkedHashMap<>();
            for (Map<String, Object> run : side.runs()) {
                for (Object o : (List<Object>) run.get("rows")) {
                    Map<String, Object> row = (Map<String, Object>) o;
                    out.computeIfAbsent((String) row.get("name"), k -> new ArrayList<>()).add(row);
                }
            }
            return out;
        }

        static void print(List<String> aFiles, List<String> bFiles) throws IOException {
            Side a = load(aFiles);
            Side b = load(bFiles);
            Map<String, List<Map<String, Object>>> ra = rowsByName(a);
            Map<String, List<Map<String, Object>>> rb = rowsByName(b);
            System.out.printf("A = %s (%d run%s), B = %s (%d run%s); figures are medians over each side's runs%n%n",
                    a.commit(), a.runs().size(), a.runs().size() == 1 ? "" : "s",
                    b.commit(), b.runs().size(), b.runs().size() == 1 ? "" : "s");
            System.out.println("| row | unit | A | B | B / A | better | A's ratio to its baseline | B's |");
            System.out.println("|---|---|---|---|---|---|---|---|");
            List<String> names = new ArrayList<>(ra.keySet());
            rb.keySet().stream().filter(n -> !ra.containsKey(n)).forEach(names::add);
            for (String name : names) {
                List<Map<String, Object>> x = ra.getOrDefault(name, List.of());
                List<Map<String, Object>> y = rb.getOrDefault(name, List.of());
                Map<String, Object> any = x.isEmpty() ? y.getFirst() : x.getFirst();
                Double fa = med(x, "figure");
                Double fb = med(y, "figure");
                System.out.printf("| %s | %s | %s | %s | %s | %s | %s | %s |%n", name, any.get("unit"), num(fa),
                        num(fb), fa == null || fb == null || fa == 0 ? "—" : String.format(Locale.ROOT, "%.3f", fb / fa),
                        any.get("better"), ratio(x), ratio(y));
            }
        }

        private static Double med(List<Map<String, Object>> rows, String key) {
            List<Double> v = rows.stream().map(r -> r.get(key)).filter(o -> o instanceof Double).map(o -> (Double) o)
                    .toList();
            return v.isEmpty() ? null : median(v);
        }

        private static String ratio(List<Map<String, Object>> rows) {
            Double r = med(rows, "ratio");
            return r == null ? "—" : String.format(Locale.ROOT, "%.2f (%s)", r, rows.getFirst().get("ratioIs"));
        }

        private static String num(Double d) {
            if (d == null) {
                return "—";
            }
            double a = Math.abs(d);
            return String.format(Locale.ROOT, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3f", d);
        }
    }
}
