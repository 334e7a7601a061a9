import dev.kosa8.workspace.HeldPolicy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The held-path check's own cost (issue 33): what the folder server adds to each change it serves, the
 * default policy's {@code classify} of the change's path and {@code guards} of its rename to a sibling, timed over
 * every path of a real tree (a git checkout with its {@code .git}: objects, refs, hooks, config), in process, after a warm-up.
 *
 *   java -cp kosa8.jar bench/HeldPolicyBench.java TREE [PASSES]
 *
 * Prints {@code paths N}, {@code held N} and {@code nsPerPath F} (the median of the passes).
 */
public class HeldPolicyBench {
    public static void main(String[] args) throws Exception {
        Path root = Path.of(args[0]);
        int passes = args.length > 1 ? Integer.parseInt(args[1]) : 15;
        List<String> paths;
        try (Stream<Path> all = Files.walk(root)) {
            paths = all.filter(p -> !p.equals(root)).map(p -> root.relativize(p).toString()).toList();
        }
        boolean[] dirs = new boolean[paths.size()];
        for (int i = 0; i < dirs.length; i++) {
            dirs[i] = Files.isDirectory(root.resolve(paths.get(i)));
        }
        HeldPolicy policy = HeldPolicy.defaults();
        long held = 0;
        double[] ns = new double[passes];
        for (int warm = 0; warm < 5; warm++) {
            held = run(policy, paths, dirs);
        }
        for (int p = 0; p < passes; p++) {
            long t0 = System.nanoTime();
            held = run(policy, paths, dirs);
            ns[p] = (System.nanoTime() - t0) / (double) paths.size();
        }
        java.util.Arrays.sort(ns);
        System.out.println("paths " + paths.size());
        System.out.println("held " + held);
        System.out.printf("nsPerPath %.1f%n", ns[passes / 2]);
    }

    private static long run(HeldPolicy policy, List<String> paths, boolean[] dirs) {
        long held = 0;
        for (int i = 0; i < dirs.length; i++) {
            String p = paths.get(i);
            if (policy.classify(p, dirs[i]) != null || policy.guards(p, p + ".new")) {
                held++;
            }
        }
        return held;
    }
}
