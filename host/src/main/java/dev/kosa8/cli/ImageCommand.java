package dev.kosa8.cli;

import dev.kosa8.image.Image;
import dev.kosa8.image.ImageBuilder;
import dev.kosa8.image.ImageStore;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

@Command(name = "image", mixinStandardHelpOptions = true, description = {"Build, list and prune guest images."},
        subcommands = {ImageCommand.Build.class, ImageCommand.Ls.class, ImageCommand.Prune.class})
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

    @Command(name = "prune", mixinStandardHelpOptions = true, description = {
        "Remove the guest images and booted templates no sandbox needs: every image but the current one, and "
                + "every template but each shape's current one, unless a sandbox's disk rests on it (its disk is an "
                + "overlay of a template's, which is an overlay of an image's).",
        "Each image build leaves the last image (about 1 GB) and its templates behind; nothing removes them but "
                + "this. `kosa8 doctor` says when there is something to remove.",
        "Example: kosa8 image prune --dry-run"})
    static final class Prune implements Callable<Integer> {
        @ParentCommand
        ImageCommand parent;

        @picocli.CommandLine.Option(names = "--dry-run", description = "Only list what would be removed.")
        boolean dryRun;

        @Override
        public Integer call() {
            var answer = parent.main.daemon().post("/v1/images/prune" + (dryRun ? "?dryRun=true" : ""));
            String verb = dryRun ? "would remove" : "removed";
            for (var item : answer.path("removed")) {
                System.out.printf("%s %s %s (%s)%n", verb, item.path("kind").asText(), item.path("name").asText(),
                        Sizes.human(item.path("bytes").asLong()));
            }
            if (answer.path("removed").isEmpty()) {
                System.out.println("nothing to remove: every image and template is current or in use");
            } else {
                System.out.printf("%s %s in all%n", dryRun ? "would free" : "freed",
                        Sizes.human(answer.path("bytes").asLong()));
            }
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
