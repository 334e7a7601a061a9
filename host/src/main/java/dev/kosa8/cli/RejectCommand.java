package dev.kosa8.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "reject", mixinStandardHelpOptions = true,
        description = {"Discard a sandbox's held changes (see `kosa8 review`): your folder keeps its version, and the"
                + " sandbox sees your folder's version again.",
                "Example: kosa8 reject 3f2a .envrc; kosa8 reject 3f2a --all"})
final class RejectCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Parameters(index = "1..*", paramLabel = "PATH", description = "Held paths, relative to the folder, as review lists them.")
    List<String> paths = List.of();

    @Option(names = "--all", description = "Every held change.")
    boolean all;

    @Override
    public Integer call() {
        return HeldAction.run(main, "reject", id, paths, all);
    }
}
