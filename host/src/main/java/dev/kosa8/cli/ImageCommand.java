package dev.kosa8.cli;

import dev.kosa8.image.Image;
import dev.kosa8.image.ImageBuilder;
import dev.kosa8.image.ImageStore;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

@Command(name = "image", mixinStandardHelpOptions = true, description = {"Build and list guest images."},
        subcommands = {ImageCommand.Build.class, ImageCommand.Ls.class})
final class ImageCommand {
    @ParentCommand
    Main main;

    @Command(name = "build", mixinStandardHelpOptions = true, description = {
        "Build the guest image: Debian's kernel, an initramfs with the kosa8 init, and a Debian root file system",
        "with git, curl, python3 and a Java runtime for the agent. Looks up the newest packages; rebuilds only",
        "the parts whose inputs changed. Runs by itself on first use."})
    static final class Build implements Callable<Integer> {
        @ParentCommand
        ImageCommand parent;

        @Override
        public Integer call() {
            Image img = new ImageBuilder(parent.main.paths, Images.printer(System.err)).build();
            System.out.println(img.id());
            return 0;
        }
    }

    @Command(name = "ls", mixinStandardHelpOptions = true, description = {"List the images on this machine; the current one is marked with *."})
    static final class Ls implements Callable<Integer> {
        @ParentCommand
        ImageCommand parent;

        @Override
        public Integer call() {
            ImageStore store = new ImageStore(parent.main.paths);
            String current = store.current().map(Image::id).orElse("");
            String fmt = "%1s %-16s  %-20s  %8s  %s%n";
            System.out.printf(fmt, "", "ID", "KERNEL", "SIZE", "DIRECTORY");
            for (Image i : store.list()) {
                System.out.printf(fmt, i.id().equals(current) ? "*" : "", i.id(), i.kernelVersion(),
                        (i.sizeBytes() >> 20) + "M", i.directory());
            }
            return 0;
        }
    }
}
