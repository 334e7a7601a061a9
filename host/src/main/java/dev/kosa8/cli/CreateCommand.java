package dev.kosa8.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.ParentCommand;

@Command(name = "create", mixinStandardHelpOptions = true, description = {"Create and boot a sandbox that stays until you remove it; prints its id."},
        footer = {"", "Example:", "  id=$(kosa8 create --memory 2G) && kosa8 exec $id -- uname -a"})
final class CreateCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Mixin
    SandboxOptions sandbox = new SandboxOptions();

    @Override
    public Integer call() {
        sandbox.warnOfWindowsDrive(System.err);
        Images.ensure(main.paths, System.err, sandbox.guestArch());
        var s = main.daemon().post("/v1/sandboxes?" + sandbox.query());
        System.out.println(s.path("id").asText());
        PortCommand.announce(s.path("id").asText(), s.path("ports"));
        return 0;
    }
}
