package dev.kosa8.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "dump-memory", mixinStandardHelpOptions = true,
        description = {"Write a running sandbox's whole RAM to FILE (an ELF core) while it keeps running.",
                "For forensics, and to check for yourself that no real key is inside, e.g.:",
                "  kosa8 dump-memory 3f2a /tmp/3f2a.core && grep -c -F \"$MY_KEY\" /tmp/3f2a.core   # 0",
                "The file holds everything in the guest's memory; delete it when done."})
final class DumpMemoryCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Parameters(index = "1", paramLabel = "FILE", description = "A new file; it must not exist.")
    Path file;

    @Override
    public Integer call() {
        Path target = file.toAbsolutePath().normalize();
        var r = main.daemon().post("/v1/sandboxes/" + Ids.check(id) + "/memory-dump?path="
                + SandboxOptions.enc(target.toString()));
        System.out.println(r.path("path").asText());
        return 0;
    }
}
