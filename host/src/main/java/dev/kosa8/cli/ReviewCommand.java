package dev.kosa8.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "review", mixinStandardHelpOptions = true,
        description = {"Show what a sandbox wrote to held paths: files host tools run or obey (git hooks and config,"
                + " .envrc, editor tasks, agent settings, CI definitions, symlinks out of the folder). They are kept"
                + " beside the sandbox, not in your folder, until you accept or reject them.",
                "Each: the path, what accepting it does (add, modify, delete), its class and what that class protects"
                        + " against, its size, and a diff against your folder's version.",
                "Works for a removed sandbox too, whose held changes were kept.",
                "Example: kosa8 review 3f2a; kosa8 accept 3f2a .vscode; kosa8 reject 3f2a --all"})
final class ReviewCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Option(names = "--no-diff", description = "List only, without diffs.")
    boolean noDiff;

    @Override
    public Integer call() {
        JsonNode r = main.daemon().get("/v1/held/" + Ids.check(id) + "?diff=" + !noDiff);
        JsonNode held = r.path("held");
        String sandbox = r.path("id").asText();
        if (held.isEmpty()) {
            System.err.println("nothing held for sandbox " + sandbox);
            return 0;
        }
        System.out.println(held.size() + " held for sandbox " + sandbox + " (folder " + r.path("folder").asText() + "):");
        for (JsonNode e : held) {
            System.out.printf("%n%-8s %s  [%s]  %s%s%n", e.path("change").asText(), e.path("path").asText(),
                    e.path("class").asText(), Sizes.human(e.path("size").asLong()),
                    e.path("conflict").asBoolean() ? "  CONFLICT: your folder's version changed since" : "");
            System.out.println("         protects against: " + e.path("protects").asText());
            String diff = e.path("diff").asText();
            if (!diff.isEmpty()) {
                System.out.print(diff.indent(2));
            }
        }
        System.out.println();
        System.out.println("accept: kosa8 accept " + sandbox + " PATH... | --all;  reject: kosa8 reject " + sandbox
                + " PATH... | --all");
        return 0;
    }
}
