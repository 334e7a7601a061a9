package dev.kosa8.cli;

import dev.kosa8.client.DaemonConnection;
import dev.kosa8.client.Json;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

@Command(name = "run", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run a command in a new sandbox, then remove the sandbox.",
            "The exit code is the command's. The guest image is built on first use (a few minutes, once)."},
        footer = {"", "Examples:",
            "  kosa8 run -- python3 -c 'print(6*7)'",
            "  echo hi | kosa8 run -i -- tr a-z A-Z",
            "  kosa8 run -it -- bash",
            "  kosa8 run --cpus 4 --memory 4G -- make -j4"})
final class RunCommand implements Callable<Integer> {
    @ParentCommand
    Main main;

    @Mixin
    SandboxOptions sandbox = new SandboxOptions();

    @Mixin
    ExecOptions exec = new ExecOptions();

    @Option(names = "--rm", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Remove the sandbox when the command ends (default). --no-rm keeps it; its id is printed.")
    boolean rm;

    @Parameters(paramLabel = "COMMAND", arity = "0..*", description = {"The command and its arguments, after --.",
            "With --image, the image's ENTRYPOINT comes first, and without a command its CMD runs."})
    List<String> command;

    @Override
    public Integer call() {
        return run(main, sandbox, exec, command, rm);
    }

    /** Runs the command in a new sandbox; shared with {@link HotPath}. */
    static int run(Main main, SandboxOptions sandbox, ExecOptions exec, List<String> command, boolean rm) {
        sandbox.warnOfWindowsDrive(System.err);
        Images.ensure(main.paths, System.err, sandbox.guestArch());
        StartTrace.step("the image checked");
        return runWithImage(main, sandbox, exec, command, rm);
    }

    /** The rest of {@link #run}, once the image is there ({@link AotTraining} runs this part: it has no image). */
    static int runWithImage(Main main, SandboxOptions sandbox, ExecOptions exec, List<String> command, boolean rm) {
        DaemonClient d = main.daemon();
        List<String> argv = command == null ? List.of() : command;
        String image = sandbox.image();
        if (!image.isEmpty()) {
            argv = imageCommand(d.get("/v1/images/inspect?name=" + SandboxOptions.enc(image)), argv);
        }
        var spec = exec.spec(argv);
        if (rm) {
            DaemonConnection.Stream stream = d.upgrade("/v1/run?" + sandbox.query());
            StartTrace.step("the sandbox made");
            if (!sandbox.publish.isEmpty()) {
                PortCommand.announce(stream.sandbox(), d.get("/v1/sandboxes/" + stream.sandbox()).path("ports"));
            }
            int code = Exec.run(stream, spec, exec.interactive);
            StartTrace.step("the command run");
            noticeHeld(d, stream.sandbox());
            return code;
        }
        String id = Json.text(d.call("POST", "/v1/sandboxes?" + sandbox.query()), "id");
        System.err.println("kosa8: sandbox " + id + " kept (remove it with `kosa8 rm -f " + id + "`)");
        if (!sandbox.publish.isEmpty()) {
            PortCommand.announce(id, d.get("/v1/sandboxes/" + id).path("ports"));
        }
        int code = Exec.run(d.upgrade("/v1/sandboxes/" + id + "/exec"), spec, exec.interactive);
        noticeHeld(d, id);
        return code;
    }

    /** One line at the end when the sandbox wrote paths that are held for review. */
    private static void noticeHeld(DaemonClient d, String id) {
        if (id.isEmpty()) {
            return;
        }
        try {
            // plain values, not Jackson's data binding: this runs at the end of every `run` ({@link HotPath})
            long n = Json.number(d.call("GET", "/v1/held/" + id + "?countOnly=true"), "count");
            if (n > 0) {
                System.err.println("kosa8: " + n + " change(s) held for review, not written to your folder: kosa8 review "
                        + id);
            }
        } catch (dev.kosa8.host.KosaException e) {
            // the notice is a courtesy: the command's own outcome stands
        }
    }

    /** What runs in a sandbox of the image, as Docker runs a container: its ENTRYPOINT, then the command or its CMD. */
    static List<String> imageCommand(com.fasterxml.jackson.databind.JsonNode image, List<String> command) {
        List<String> out = new java.util.ArrayList<>();
        image.path("config").path("entrypoint").forEach(e -> out.add(e.asText()));
        if (command.isEmpty()) {
            image.path("config").path("cmd").forEach(e -> out.add(e.asText()));
            if (out.isEmpty()) {
                throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.USAGE, "no command given, and "
                        + "image " + image.path("name").asText() + " has no CMD or ENTRYPOINT",
                        "put the command after --, like: kosa8 run --image NAME -- echo hello");
            }
        } else {
            out.addAll(command);
        }
        return out;
    }
}
