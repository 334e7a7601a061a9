import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Counts what restores' wakes translated (bench/wake-trace.sh): QEMU's {@code in_asm} logs (one block per
 * translation), attributed by the guest's kernel symbols and the agent JVM's mappings, and the JVM's own code by
 * the host's copy of the same {@code libjvm.so}.
 *
 * <pre>java bench/WakeTrace.java TRACE_DIR KALLSYMS MAPS LIBJVM</pre>
 *
 * Prints a Markdown table per wake and the kernel functions and JVM parts that translated most, over all wakes.
 * Writes its result under bench/results/ (bench/BenchResult.java, beside this file): the first wake's counts (the
 * script's `create`, a restore of the template) and the median of the others' (its rewinds).
 */
public class WakeTrace {
    private static final Pattern BLOCK_LINE = Pattern.compile("^0x([0-9a-f]+):\\s+((?:[0-9a-f]{2} )+)");

    /** The JVM's JIT compiler (C1) and what it drives, by the class or function name's start. */
    private static final Pattern COMPILER = Pattern.compile("^(GraphBuilder|LinearScan|LIR|Assembler|MacroAssembler|"
            + "CodeBuffer|ci[A-Z]|Compilation|CompileBroker|CompileTask|CompileQueue|MethodLiveness|BlockListBuilder|"
            + "BlockBegin|BlockList|ValueStack|ValueMap|FrameMap|Dependencies|Optimizer|GlobalValueNumbering|"
            + "NullCheckEliminator|ComputeLinearScanOrder|IR\\b|IRScope|Instruction|Interval|RangeCheck|nmethod|OopMap|"
            + "DebugInformationRecorder|Relocation|reloc|CodeCache|Compiler|C1|Runtime1|CE_Eliminator|PhiSimplifier|"
            + "ControlFlowOptimizer|CodeEmitInfo|ScopeValue|ExceptionInfo|CompiledIC|CodeBlob|CodeSection|"
            + "AbstractCompiler|CompLevel CompilationPolicy|CompilationPolicy|ImplicitExceptionTable|"
            + "ExceptionHandlerTable|Canonicalizer|LoopFinder|BlockMerger|XHandler|StateSplit|MethodData)");

    record Symbol(long address, String name) {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: java WakeTrace.java TRACE_DIR KALLSYMS MAPS LIBJVM");
            System.exit(2);
        }
        List<Symbol> kernel = kallsyms(Path.of(args[1]));
        List<long[]> ranges = new ArrayList<>();
        List<String> names = new ArrayList<>();
        long jvmBase = maps(Path.of(args[2]), ranges, names);
        List<Symbol> jvm = nm(args[3]);
        Map<String, Integer> kernelFunctions = new HashMap<>();
        Map<String, Integer> jvmParts = new HashMap<>();
        List<Path> traces;
        try (var list = Files.list(Path.of(args[0]))) {
            traces = list.filter(p -> p.toString().endsWith(".in_asm")).sorted().toList();
        }
        System.out.println("| wake | blocks translated | guest instructions | kernel | kernel modules | "
                + "agent: libjvm.so, JIT compiler (C1) | libjvm.so, the rest | JIT code and interpreter | "
                + "the agent's other libraries | other processes |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|");
        List<Map<String, Integer>> perWake = new ArrayList<>();
        for (Path trace : traces) {
            Map<String, Integer> blocks = new TreeMap<>();
            int instructions = 0;
            boolean first = false;
            for (String line : Files.readAllLines(trace, java.nio.charset.StandardCharsets.ISO_8859_1)) {
                if (line.startsWith("IN:")) {
                    first = true;
                    continue;
                }
                Matcher m = BLOCK_LINE.matcher(line);
                if (!m.find()) {
                    continue;
                }
                instructions++;
                if (!first) {
                    continue;
                }
                first = false;
                long a = Long.parseUnsignedLong(m.group(1), 16);
                String region;
                if (Long.compareUnsigned(a, 0xffffffffc0000000L) >= 0) {
                    region = "modules";
                } else if (Long.compareUnsigned(a, 0xffffffff80000000L) >= 0) {
                    region = "kernel";
                    kernelFunctions.merge(lookup(kernel, a), 1, Integer::sum);
                } else {
                    String file = mapping(ranges, names, a);
                    if (file == null) {
                        region = "other";
                    } else if (file.endsWith("/libjvm.so")) {
                        String fn = lookup(jvm, a - jvmBase);
                        boolean compiler = COMPILER.matcher(fn).find();
                        region = compiler ? "jvm-c1" : "jvm";
                        String part = fn.contains("::") ? fn.substring(0, fn.indexOf("::")) : fn;
                        jvmParts.merge((compiler ? "C1 " : "") + part, 1, Integer::sum);
                    } else if (file.equals("[anon]")) {
                        region = "jit";
                    } else {
                        region = "libs";
                    }
                }
                blocks.merge(region, 1, Integer::sum);
            }
            int total = blocks.values().stream().mapToInt(Integer::intValue).sum();
            blocks.put("total", total);
            perWake.add(blocks);
            System.out.printf("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s |%n",
                    trace.getFileName().toString().replaceFirst("\\.in_asm$", ""), total, instructions,
                    share(blocks, "kernel", total), share(blocks, "modules", total), share(blocks, "jvm-c1", total),
                    share(blocks, "jvm", total), share(blocks, "jit", total), share(blocks, "libs", total),
                    share(blocks, "other", total));
        }
        System.out.println();
        System.out.println("Kernel functions that translated most blocks, over all wakes: " + top(kernelFunctions, 25));
        System.out.println();
        System.out.println("Parts of libjvm.so (\"C1\": the JIT compiler), over all wakes: " + top(jvmParts, 25));
        record(perWake);
    }

    /** The first wake is the create's (a restore of the template), the others the rewinds'. */
    private static void record(List<Map<String, Integer>> perWake) {
        if (perWake.isEmpty()) {
            return;
        }
        BenchResult result = new BenchResult("wake-trace");
        String none = "none: a count of guest code, the same on any machine; compare builds with bench/ab.sh";
        Map<String, String> parts = new java.util.LinkedHashMap<>();
        parts.put("total", "blocks translated");
        parts.put("kernel", "of them the guest kernel's");
        parts.put("jvm-c1", "of them libjvm.so's JIT compiler (C1)");
        parts.put("jvm", "of them the rest of libjvm.so");
        parts.put("jit", "of them JIT code and interpreter");
        List<Map<String, Integer>> rewinds = perWake.subList(1, perWake.size());
        parts.forEach((key, what) -> {
            int created = perWake.getFirst().getOrDefault(key, 0);
            result.add(BenchResult.Row.of("create's wake: " + what, "blocks", BenchResult.Better.LOWER, created,
                    List.of(created)).noBaseline(none));
            if (!rewinds.isEmpty()) {
                result.add(BenchResult.Row.of("a rewind's wake, median: " + what, "blocks", BenchResult.Better.LOWER,
                        rewinds.stream().map(w -> w.getOrDefault(key, 0)).toList()).noBaseline(none));
            }
        });
        result.write();
    }

    private static String share(Map<String, Integer> blocks, String region, int total) {
        int n = blocks.getOrDefault(region, 0);
        return n + " (" + Math.round(100.0 * n / Math.max(1, total)) + "%)";
    }

    private static String top(Map<String, Integer> counts, int n) {
        return String.join(", ", counts.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(n)
                .map(e -> e.getKey() + " " + e.getValue()).toList());
    }

    private static String lookup(List<Symbol> symbols, long address) {
        int lo = 0;
        int hi = symbols.size() - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(symbols.get(mid).address(), address) <= 0) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found < 0 ? "?" : symbols.get(found).name();
    }

    private static List<Symbol> kallsyms(Path file) throws IOException {
        List<Symbol> out = new ArrayList<>();
        for (String line : Files.readAllLines(file)) {
            String[] p = line.split("\\s+");
            if (p.length >= 3 && "tTwW".contains(p[1])) {
                out.add(new Symbol(Long.parseUnsignedLong(p[0], 16), p[2]));
            }
        }
        out.sort(Comparator.comparing(Symbol::address, Long::compareUnsigned));
        return out;
    }

    /** The executable mappings of the agent's JVM; returns where its libjvm.so is mapped from offset 0. */
    private static long maps(Path file, List<long[]> ranges, List<String> names) throws IOException {
        Pattern p = Pattern.compile("^([0-9a-f]+)-([0-9a-f]+) (\\S+) ([0-9a-f]+) \\S+ \\S+\\s*(.*)$");
        long base = -1;
        for (String line : Files.readAllLines(file)) {
            Matcher m = p.matcher(line);
            if (!m.find()) {
                continue;
            }
            long start = Long.parseUnsignedLong(m.group(1), 16);
            String name = m.group(5).isBlank() ? "[anon]" : m.group(5).strip();
            if (name.endsWith("/libjvm.so") && Long.parseLong(m.group(4), 16) == 0 && base < 0) {
                base = start;
            }
            if (m.group(3).contains("x")) {
                ranges.add(new long[] {start, Long.parseUnsignedLong(m.group(2), 16)});
                names.add(name);
            }
        }
        return base;
    }

    private static String mapping(List<long[]> ranges, List<String> names, long a) {
        for (int i = 0; i < ranges.size(); i++) {
            if (Long.compareUnsigned(a, ranges.get(i)[0]) >= 0 && Long.compareUnsigned(a, ranges.get(i)[1]) < 0) {
                return names.get(i);
            }
        }
        return null;
    }

    private static List<Symbol> nm(String library) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("nm", "-C", "--defined-only", library).redirectErrorStream(true).start();
        List<Symbol> out = new ArrayList<>();
        try (var r = p.inputReader()) {
            String line;
            while ((line = r.readLine()) != null) {
                String[] f = line.split(" ", 3);
                if (f.length == 3 && "tTwW".contains(f[1]) && f[0].matches("[0-9a-f]+")) {
                    out.add(new Symbol(Long.parseUnsignedLong(f[0], 16), f[2]));
                }
            }
        }
        p.waitFor();
        out.sort(Comparator.comparing(Symbol::address, Long::compareUnsigned));
        return out;
    }
}
