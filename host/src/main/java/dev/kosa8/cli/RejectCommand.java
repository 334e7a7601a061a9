package dev.kosa8.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.ParentCommand;

@Command(name = "reject", mixinStandardHelpOptions = true,
        description = {"Discard a sandbox's held changes (see `kosa8 review`): your folder keeps its version, and the"
                + " sandbox sees your folder's version again.",
                "Example: kosa8 reject 3f2a .envrc; kosa8 reject 3f2a --all"})
final class RejectCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Mixin
    HeldAction held;

    @Override
    public Integer call() {
        return held.run(main, "reject");
    }
}
