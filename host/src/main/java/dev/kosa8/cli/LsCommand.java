package dev.kosa8.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

@Command(name = "ls", mixinStandardHelpOptions = true, aliases = "ps", description = {"List sandboxes."})
final class LsCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Option(names = {"-q", "--quiet"}, description = "Print ids only.")
    boolean quiet;

    @Override
    public Integer call() {
        JsonNode list = main.daemon().get("/v1/sandboxes");
        if (quiet) {
            list.forEach(s -> System.out.println(s.path("id").asText()));
            return 0;
        }
        String fmt = "%-12s  %-8s  %-9s  %4s  %7s  %-5s  %s%n";
        System.out.printf(fmt, "ID", "STATE", "KIND", "CPUS", "MEMORY", "ACCEL", "CREATED");
        for (JsonNode s : list) {
            System.out.printf(fmt, s.path("id").asText(), s.path("state").asText(),
                    s.path("ephemeral").asBoolean() ? "ephemeral" : "kept", s.path("cpus").asInt(),
                    s.path("memoryMiB").asInt() + "M", s.path("accelerator").asText(),
                    ago(s.path("created").asText()));
        }
        return 0;
    }

    static String ago(String instant) {
        try {
            Duration d = Duration.between(Instant.parse(instant), Instant.now());
            if (d.toMinutes() < 1) {
                return d.toSeconds() + " s ago";
            }
            if (d.toHours() < 1) {
                return d.toMinutes() + " min ago";
            }
            if (d.toDays() < 1) {
                return d.toHours() + " h ago";
            }
            return d.toDays() + " days ago";
        } catch (RuntimeException e) {
            return instant;
        }
    }
}
