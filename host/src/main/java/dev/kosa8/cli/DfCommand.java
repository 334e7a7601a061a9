package dev.kosa8.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

@Command(name = "df", mixinStandardHelpOptions = true,
        description = {"Show what kosa8 keeps on this machine's disk: per sandbox its root disk (the overlay, with "
                + "its checkpoints' disk snapshots), its checkpoints, its held changes, its logs, the total and its "
                + "budget; per image and template its size and the sandboxes resting on it; and what can be had "
                + "back.",
                "Example: kosa8 df"})
final class DfCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Option(names = "--json", description = "Print the daemon's answer as JSON.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        JsonNode df = main.daemon().get("/v1/df");
        if (json) {
            System.out.println(DaemonClient.json().writerWithDefaultPrettyPrinter().writeValueAsString(df));
            return 0;
        }
        String row = "%-14s %-9s %10s %10s %6s %10s %10s %10s %10s%n";
        System.out.printf(row, "SANDBOX", "STATE", "DISK", "CHECKPTS", "COUNT", "HELD", "LOGS", "TOTAL", "BUDGET");
        for (JsonNode s : df.path("sandboxes")) {
            System.out.printf(row, s.path("id").asText(), s.path("state").asText(), h(s, "disk"), h(s, "checkpoints"),
                    s.path("checkpointCount").asInt() + "/" + s.path("budget").path("checkpointCount").asInt(),
                    h(s, "held"), h(s, "logs"), h(s, "total"), Sizes.human(s.path("budget").path("diskBytes").asLong()));
        }
        System.out.printf("%n%-18s %-8s %10s  %s%n", "IMAGE", "CURRENT", "SIZE", "SANDBOXES ON IT");
        for (JsonNode i : df.path("images")) {
            System.out.printf("%-18s %-8s %10s  %s%n", i.path("id").asText(), i.path("current").asBoolean() ? "yes" : "",
                    h(i, "bytes"), list(i.path("sandboxes")));
        }
        System.out.printf("%n%-48s %-8s %10s  %s%n", "TEMPLATE", "CURRENT", "SIZE", "SANDBOXES ON IT");
        for (JsonNode t : df.path("templates")) {
            System.out.printf("%-48s %-8s %10s  %s%n", t.path("name").asText(),
                    t.path("current").asBoolean() ? "yes" : "", h(t, "bytes"), list(t.path("sandboxes")));
        }
        JsonNode r = df.path("reclaimable");
        System.out.printf("%nreclaimable: %s by `kosa8 image prune` (%d old image(s) and template(s)); %s in"
                        + " checkpoints (`kosa8 checkpoint rm ID CHECKPOINT`)%n", h(r, "prune"), r.path("pruneItems").size(),
                h(r, "checkpoints"));
        if (!r.path("heldKeptSandboxes").isEmpty()) {
            System.out.printf("             %s in held changes of removed sandboxes (%s: `kosa8 review ID`, then"
                    + " accept or reject)%n", h(r, "heldKept"), list(r.path("heldKeptSandboxes")));
        }
        return 0;
    }

    private static String h(JsonNode n, String field) {
        return Sizes.human(n.path(field).asLong());
    }

    private static String list(JsonNode ids) {
        if (ids.isEmpty()) {
            return "-";
        }
        StringBuilder b = new StringBuilder();
        ids.forEach(id -> b.append(b.isEmpty() ? "" : " ").append(id.asText()));
        return b.toString();
    }
}
