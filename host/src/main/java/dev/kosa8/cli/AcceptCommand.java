package dev.kosa8.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.ParentCommand;

@Command(name = "accept", mixinStandardHelpOptions = true,
        description = {"Put a sandbox's held changes into your folder (see `kosa8 review`). Each is put in place whole"
                + " (a rename: your folder's file is the old one or the new one, never part of either). One whose"
                + " version in your folder changed since it was held is a conflict: shown, left held, not overwritten.",
                "Example: kosa8 accept 3f2a .git/hooks; kosa8 accept 3f2a --all"})
final class AcceptCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Mixin
    HeldAction held;

    @Override
    public Integer call() {
        return held.run(main, "accept");
    }
}
