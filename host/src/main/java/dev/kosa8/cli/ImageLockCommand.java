package dev.kosa8.cli;

import dev.kosa8.image.ImageLocks;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code kosa8 image lock [ID]}: prints the exact Debian packages a base image was built from, as a lock that
 * {@code kosa8 image build --from-lock} builds again. Read from the image's files on this machine; the daemon is
 * not needed.
 */
@Command(name = "lock", mixinStandardHelpOptions = true,
        description = {"Print the lock of kosa8's own image: every Debian package it was built from (kernel, "
                + "busybox, root filesystem), each with its version, archive path and SHA-256. Keep it with your "
                + "project; `kosa8 image build --from-lock FILE` builds those very packages again, here or on "
                + "another machine."},
        footer = {"", "Examples:",
            "  kosa8 image lock > kosa8-image.lock",
            "  kosa8 image build --from-lock kosa8-image.lock"})
final class ImageLockCommand implements Callable<Integer> {
    @ParentCommand
    ImageCommand parent;

    @Parameters(index = "0", arity = "0..1", paramLabel = "ID",
            description = "The base image (its id or a unique start of it, from `kosa8 image ls`; default: the current one).")
    String id = "";

    @Override
    public Integer call() {
        System.out.print(ImageLocks.of(parent.main.paths, id, line -> System.err.println("kosa8: " + line)).text());
        return 0;
    }
}
