package dev.kosa8.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kosa8.host.KosaException;
import java.util.List;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * What accept and reject share, as a picocli mixin: the sandbox and the held paths (or {@code --all}) they take,
 * the request, and what it did, printed.
 */
final class HeldAction {
    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Parameters(index = "1..*", paramLabel = "PATH", description = "Held paths, relative to the folder, as review lists them.")
    List<String> paths = List.of();

    @Option(names = "--all", description = "Every held change.")
    boolean all;

    /** Asks the daemon to {@code action} ("accept" or "reject") the paths named; 1 when any was a conflict. */
    int run(Main main, String action) {
        if (all == !paths.isEmpty()) {
            throw new KosaException(KosaException.Kind.USAGE, all ? "--all and paths together" : "nothing to " + action,
                    "name held paths (`kosa8 review " + id + "` lists them), or pass --all");
        }
        StringBuilder q = new StringBuilder("all=" + all);
        for (String p : paths) {
            q.append("&path=").append(SandboxOptions.enc(p));
        }
        JsonNode r = main.daemon().post("/v1/held/" + Ids.check(id) + "/" + action + "?" + q);
        for (JsonNode p : r.path("done")) {
            System.out.println(action + "ed " + p.asText());
        }
        for (JsonNode p : r.path("conflicts")) {
            System.err.println("kosa8: conflict: " + p.asText() + " changed in your folder since it was held; left held"
                    + " (see `kosa8 review " + r.path("id").asText() + "`, then reject it or change your version back)");
        }
        int left = r.path("left").asInt();
        if (left > 0) {
            System.err.println(left + " still held: kosa8 review " + r.path("id").asText());
        }
        return r.path("conflicts").isEmpty() ? 0 : 1;
    }
}
