package dev.kosa8.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "deny", mixinStandardHelpOptions = true,
        description = {"Take a host off a sandbox's allow-list, at once: new connections are refused and open ones "
                + "to it are closed.", "HOST is written as `kosa8 net ID` shows it."})
final class DenyCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Parameters(index = "1", paramLabel = "HOST", description = "The host or *.domain to deny.")
    String host;

    @Override
    public Integer call() {
        NetCommand.print(main.daemon().post("/v1/sandboxes/" + Ids.check(id) + "/net/deny?host="
                + SandboxOptions.enc(host)));
        return 0;
    }
}
