package dev.kosa8.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

/**
 * {@code kosa8 image ensure}: what every command that makes a sandbox does first, on its own. A program that
 * makes sandboxes through the daemon's API or the Java SDK runs it once after installing or upgrading kosa8:
 * the daemon boots the image it finds and never builds one.
 */
@Command(name = "ensure", mixinStandardHelpOptions = true,
        description = {"Build what kosa8's own image (kosa8/debian) lacks for this kosa8, if anything, showing each "
                + "step; at once when it is complete. `run`, `create` and `start` do this themselves; a program "
                + "that makes sandboxes through the API or the Java SDK runs it after installing or upgrading kosa8 "
                + "(docs/sdk.md). Prints the image's id."})
final class ImageEnsureCommand implements Callable<Integer> {
    @ParentCommand
    ImageCommand parent;

    @Override
    public Integer call() {
        Images.ensure(parent.main.paths, System.err);
        System.out.println(parent.main.daemon().get("/v1/images/inspect?name=kosa8%2Fdebian").path("id").asText());
        return 0;
    }
}
