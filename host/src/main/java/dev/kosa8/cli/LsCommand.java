package dev.kosa8.cli;

import dev.kosa8.client.Json;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
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
        return run(main.daemon(), quiet, System.out);
    }

    /** Lists the sandboxes; shared with {@link HotPath}. */
    static int run(DaemonClient daemon, boolean quiet, PrintStream out) {
        List<?> list = Json.list(daemon.call("GET", "/v1/sandboxes"));
        if (quiet) {
            list.forEach(s -> out.println(Json.text(s, "id")));
            return 0;
        }
        String fmt = "%-12s  %-8s  %-9s  %4s  %7s  %-5s  %-14s  %-16s  %s%n";
        out.printf(fmt, "ID", "STATE", "KIND", "CPUS", "MEMORY", "ACCEL", "CREATED", "BY", "PORTS");
        for (Object s : list) {
            out.printf(fmt, Json.text(s, "id"), Json.text(s, "state"),
                    Json.flag(s, "ephemeral") ? "ephemeral" : "kept", Json.number(s, "cpus"),
                    Json.number(s, "memoryMiB") + "M", Json.text(s, "accelerator"), ago(Json.text(s, "created")),
                    by(s), ports(s));
        }
        return 0;
    }

    /** Who made it: {@code mcp:CLIENT} for an MCP session's ({@code kosa8 mcp}), {@code -} for the user's. */
    static String by(Object sandbox) {
        String by = Json.text(sandbox, "createdBy");
        return by.isEmpty() ? "-" : by;
    }

    /** The published ports, host to guest ({@code 127.0.0.1:8080->80}), comma-separated. */
    static String ports(Object sandbox) {
        Object ports = sandbox instanceof java.util.Map<?, ?> m ? m.get("ports") : null;
        return String.join(",", Json.list(ports).stream().map(String::valueOf).toList());
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
