package dev.kosa8.cli;

import dev.kosa8.client.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "procs", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"List the processes the daemon keeps in a sandbox (started with `kosa8 exec -d` or "
                + "`--timeout`): running ones, and the last that ended (\"processRecords\" in settings.json, 64 by "
                + "default), with their exit codes.",
            "",
            "OUTPUT is every byte the process wrote (stdout and stderr together); DROPPED, what was dropped before "
                + "anyone read it. STARTED is UTC. A process dies with its sandbox's machine: a rewind, stop or "
                + "crash ends it `failed`, with the reason (--json shows it)."},
        footer = {"", "Examples:", "  kosa8 procs ID", "  kosa8 procs -q ID | xargs -n1 kosa8 kill ID   # end every one",
            "  kosa8 procs --json ID"})
final class ProcsCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox (its id or a unique prefix).")
    String id;

    @Option(names = {"-q", "--quiet"}, description = "Only the ids of running processes.")
    boolean quiet;

    @Option(names = "--json", description = "The daemon's records as JSON (docs/api.md, \"Processes\").")
    boolean json;

    @Override
    public Integer call() throws Exception {
        if (json) {
            System.out.println(DaemonClient.json().writerWithDefaultPrettyPrinter().writeValueAsString(
                    main.daemon().get("/v1/sandboxes/" + Ids.check(id) + "/processes")));
            return 0;
        }
        List<?> all = Json.list(new ProcessCalls(main.daemon(), id).list());
        if (quiet) {
            all.stream().filter(p -> "running".equals(Json.text(p, "state")))
                    .forEach(p -> System.out.println(Json.text(p, "id")));
            return 0;
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"PROC", "STATUS", "STARTED", "OUTPUT", "DROPPED", "TAG", "COMMAND"});
        for (Object p : all) {
            Object out = Json.get(p, "output");
            rows.add(new String[] {Json.text(p, "id"), status(p), Json.text(p, "started").replaceAll("\\.\\d+Z$", "Z"),
                Sizes.human(Json.number(out, "end")), Sizes.human(Json.number(out, "dropped")), Json.text(p, "tag"),
                String.join(" ", Json.list(Json.get(p, "command")).stream().map(String::valueOf).toList())});
        }
        print(rows);
        return 0;
    }

    /** running; exited 0; exited 137 (SIGKILL); failed. */
    static String status(Object p) {
        String state = Json.text(p, "state");
        return switch (state) {
            case "exited" -> "exited " + Json.text(p, "exitCode") + (Json.number(p, "signal") > 0
                    ? " (" + dev.kosa8.processes.SignalNames.name((int) Json.number(p, "signal")) + ")" : "")
                    + (Json.text(p, "reason").startsWith("timed out") ? " timed out" : "");
            case "failed" -> "failed";
            default -> state;
        };
    }

    private static void print(List<String[]> rows) {
        int[] width = new int[rows.getFirst().length];
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        for (String[] r : rows) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                sb.append(i == r.length - 1 ? r[i] : String.format("%-" + width[i] + "s  ", r[i]));
            }
            System.out.println(sb.toString().stripTrailing());
        }
    }
}
