package dev.kosa8.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "net", mixinStandardHelpOptions = true, subcommands = NetCommand.Log.class,
        description = {"Show a sandbox's network policy: its mode and allow-list (passthrough hosts marked), whether "
                + "it trusts the host's CAs, and the address exceptions it is dialed under.",
                "Without ID: your own network settings (network.json in kosa8's config directory): address "
                        + "exceptions and the host's CAs.",
                "Change a sandbox's list with `kosa8 allow ID HOST` and `kosa8 deny ID HOST`; see what it did with "
                        + "`kosa8 net log ID`."})
final class NetCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Parameters(index = "0", arity = "0..1", paramLabel = "ID", description = "The sandbox.")
    String id;

    @Override
    public Integer call() {
        if (id == null) {
            printSettings(main.daemon().get("/v1/net"));
            return 0;
        }
        print(main.daemon().get("/v1/sandboxes/" + Ids.check(id) + "/net"));
        return 0;
    }

    /** Your own settings: where they live, the address exceptions, the host's CAs. */
    static void printSettings(JsonNode net) {
        System.out.println("settings: " + net.path("settings").asText());
        printExceptions(net);
        System.out.println("trust host CAs by default: " + (net.path("trustHostCasByDefault").asBoolean()
                ? "yes" : "no (give --trust-host-cas)"));
        System.out.println("host CAs: " + net.path("hostCas").asText());
        net.path("hostCaProblems").forEach(p -> System.out.println("  left out: " + p.asText()));
    }

    private static void printExceptions(JsonNode net) {
        if (net.path("addressExceptions").isEmpty()) {
            System.out.println("address exceptions: none (every name is refused at private, loopback, link-local "
                    + "and reserved addresses)");
        } else {
            System.out.println("address exceptions (names dialed at addresses refused by default):");
            net.path("addressExceptions").forEach(e -> System.out.println("  " + e.asText()));
        }
    }

    static void print(JsonNode net) {
        System.out.println("mode: " + net.path("mode").asText());
        if (net.path("allow").isEmpty()) {
            System.out.println("allow: (nothing" + ("open".equals(net.path("mode").asText()) ? ", but the network is open)"
                    : ": every host is denied)"));
        } else {
            System.out.println("allow:");
            net.path("allow").forEach(r -> System.out.println("  " + r.asText()));
            boolean anyPassthrough = false;
            for (JsonNode r : net.path("allow")) {
                anyPassthrough |= r.asText().startsWith(dev.kosa8.egress.AllowRule.PASSTHROUGH + " ");
            }
            System.out.println(anyPassthrough
                    ? "TLS to the passthrough hosts is relayed unread; every other host's requests are read and checked"
                    : "TLS to every host is read by the broker: each request must name the host it connected for");
        }
        if (net.path("trustHostCas").asBoolean()) {
            System.out.println("trusts the host's CAs: " + net.path("hostCas").asText());
        } else {
            System.out.println("trusts the host's CAs: no");
        }
        printExceptions(net);
    }

    @Command(name = "log", mixinStandardHelpOptions = true,
            description = {"Print a sandbox's network audit log: one JSON line per connection, request or refused "
                    + "DNS query, with the decision and its reason. Never header values, bodies or queries."})
    static final class Log implements Callable<Integer> {
        @ParentCommand
        NetCommand net;

        @Parameters(index = "0", paramLabel = "ID", description = "The sandbox.")
        String id;

        @Option(names = {"-f", "--follow"}, description = "Keep printing new lines as they come (Ctrl-C stops).")
        boolean follow;

        @Override
        public Integer call() throws IOException, InterruptedException {
            Path file = Path.of(net.main.daemon().get("/v1/sandboxes/" + Ids.check(id) + "/net").path("log").asText());
            long pos = 0;
            do {
                if (Files.exists(file)) {
                    if (Files.size(file) < pos) {
                        pos = 0; // rotated to net.log.1: the new file starts over
                    }
                    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
                        f.seek(pos);
                        byte[] buf = new byte[(int) Math.min(f.length() - pos, 1 << 20)];
                        f.readFully(buf);
                        pos += buf.length;
                        System.out.print(new String(buf, StandardCharsets.UTF_8));
                        System.out.flush();
                    }
                }
                if (follow) {
                    Thread.sleep(250);
                }
            } while (follow);
            return 0;
        }
    }
}
