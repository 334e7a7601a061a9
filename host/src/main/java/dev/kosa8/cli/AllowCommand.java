package dev.kosa8.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "allow", mixinStandardHelpOptions = true,
        description = {"Let a sandbox reach more hosts, at once, while it runs.",
                "HOST is a name, *.domain, name:port, 'METHODS name/path-prefix' or a preset such as @pypi.",
                "With --passthrough, TLS to the hosts is relayed unread (for clients that pin certificates).",
                "Example: kosa8 allow 3f2a pypi.org files.pythonhosted.org"})
final class AllowCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "HOST", description = "What to allow.")
    List<String> hosts;

    @picocli.CommandLine.Option(names = "--passthrough",
            description = "Pass TLS to these hosts through unread instead of reading each request (the default).")
    boolean passthrough;

    @Override
    public Integer call() {
        StringBuilder q = new StringBuilder();
        for (String h : hosts) {
            q.append(q.isEmpty() ? "?" : "&").append("rule=")
                    .append(SandboxOptions.enc(passthrough ? dev.kosa8.egress.AllowRule.PASSTHROUGH + " " + h : h));
        }
        NetCommand.print(main.daemon().post("/v1/sandboxes/" + Ids.check(id) + "/net/allow" + q));
        return 0;
    }
}
