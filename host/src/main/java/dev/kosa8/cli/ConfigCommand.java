package dev.kosa8.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

@Command(name = "config", mixinStandardHelpOptions = true,
        description = {"A project's settings for `run` and `create`: .kosa8/config.toml in the folder the sandbox "
                + "shares (the current directory unless --workspace names another) sets image, cpus, memory, net, "
                + "allow, passthrough and secrets; an option on the command line replaces the file's setting whole.",
                "A sandbox cannot change this file for the next run: its writes to .kosa8/ are held for review "
                + "(`kosa8 review`), and kosa8 reads the folder as it is on the host."},
        subcommands = {ConfigCommand.Show.class},
        footer = {"", "Example .kosa8/config.toml:", "  image = \"tools:1\"", "  memory = \"2G\"",
                "  allow = [\"@pypi\", \"api.github.com\"]", "  secrets = [\"OPENAI_API_KEY\"]"})
final class ConfigCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        new picocli.CommandLine(this).usage(System.err);
        return 2;
    }

    @Command(name = "show", mixinStandardHelpOptions = true,
            description = {"Print the settings a sandbox made here would get, and where each comes from: the "
                    + "command line, .kosa8/config.toml, or kosa8's default. Takes the options of `run`/`create`.",
                    "Example: kosa8 config show --memory 2G"})
    static final class Show implements Callable<Integer> {
        @Mixin
        SandboxOptions sandbox = new SandboxOptions();

        @Override
        public Integer call() {
            EffectiveSettings e = sandbox.effective();
            for (EffectiveSettings.Setting s : e.settings().values()) {
                String v = s.value().isEmpty() ? (s.name().equals("image") ? "kosa8/debian" : "(none)") : s.value();
                System.out.printf("%-12s %-40s %s%n", s.name(), v, s.source());
            }
            return 0;
        }
    }
}
