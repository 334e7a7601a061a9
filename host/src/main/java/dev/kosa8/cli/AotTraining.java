package dev.kosa8.cli;

import dev.kosa8.client.DaemonConnection;
import dev.kosa8.host.BuildId;
import dev.kosa8.host.HostPaths;
import dev.kosa8.protocol.FrameReader;
import dev.kosa8.protocol.FrameWriter;
import dev.kosa8.protocol.Message;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The training run of the CLI's AOT cache (the {@code kosa8} launcher runs
 * it once per build with {@code -XX:AOTCacheOutput}): the commands an agent
 * calls all day ({@link HotPath}) against a stand-in daemon of its own on a
 * socket in a temporary folder, so the classes they load and link are those
 * the cache holds. The JVM loads every class of the cache at start, used or
 * not, so the cache is trained on these paths alone, not on picocli's help:
 * BENCHMARKS.md, "CLI start-up", has the figures that decided it.
 *
 * <p>Nothing here reaches a real daemon, sandbox or kosa8 home; the stand-in
 * answers with fixed JSON and runs no command.
 */
final class AotTraining {
    private AotTraining() {
    }

    public static void main(String[] args) throws Exception {
        List<String> done = train(new PrintStream(OutputStream.nullOutputStream()));
        System.err.println("kosa8: AOT training ran " + String.join(", ", done));
        System.exit(0); // as the CLI ends: its exit's classes are in the cache too
    }

    /** Runs the hot commands once each against a stand-in daemon; what it ran. */
    static List<String> train(PrintStream quiet) throws Exception {
        Path dir = Files.createTempDirectory("kosa8-aot-training");
        HostPaths paths = new HostPaths(dir.resolve("data"), dir.resolve("cache"), dir.resolve("run"));
        Files.createDirectories(paths.runtime());
        List<String> done = new ArrayList<>();
        PrintStream out = System.out;
        PrintStream err = System.err;
        try (ServerSocketChannel server = ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(paths.daemonSocket()));
            Thread daemon = Thread.ofPlatform().daemon().name("kosa8-aot-training").start(() -> serve(server));
            System.setOut(quiet);
            System.setErr(quiet);
            DaemonClient d = new DaemonClient(paths);
            d.ensureRunning(BuildId.current(), Duration.ofSeconds(5)); // asks GET /v1/version: no build file yet
            Files.writeString(paths.daemonBuild(), BuildId.current() + "\n"); // each line below: the file read
            // what Main.main does before it dispatches (the hook off, the home from the environment), then each
            // line as Main.main runs it: the same code, so the same classes and call sites, in the cache
            if (dev.kosa8.host.CrashPoints.Settings.of(java.util.Map.of()).on()) {
                throw new IllegalStateException("the crash hook on without its variable");
            }
            linkWhatNoLineRuns();
            HostPaths.fromEnvironment();
            Main main = new Main(paths);
            String[][] lines = {
                {"--version"}, {"ls"}, {"ls", "-q"}, {"checkpoint", "0123456789ab", "-m", "x"},
                {"checkpoints", "0123456789ab"}, {"rewind", "0123456789ab"}, {"exec", "0123456789ab", "--", "true"},
            };
            for (String[] line : lines) {
                HotPath.Call call = HotPath.parse(line).orElseThrow(() -> new IllegalStateException(
                        "the hot path no longer takes " + String.join(" ", line)));
                if (call instanceof HotPath.Run r) {
                    throw new IllegalStateException("not trained: " + r);
                }
                int code = Main.dispatch(line, main);
                if (code != 0) {
                    throw new IllegalStateException("the stand-in's " + line[0] + " exited " + code);
                }
                done.add(line[0]);
            }
            // run's first steps: the Windows-drive check of the folder (this one, as run's default shares it),
            // then, as Images.ensure takes it, is the image there? (none in this temporary home)
            SandboxOptions.defaults().warnOfWindowsDrive(quiet);
            if (new dev.kosa8.image.ImageBuilder(paths, Images.printer(quiet)).ensuredBefore()) {
                throw new IllegalStateException("an image in the training's empty home");
            }
            done.add("the image check");
            // and the rest of run, as HotPath reads its line, past the image (a new sandbox of the stand-in's)
            String[] run = {"run", "--", "true"};
            if (!(HotPath.parse(run).orElse(null) instanceof HotPath.Run r)) {
                throw new IllegalStateException("the hot path no longer takes " + String.join(" ", run));
            }
            int ran = RunCommand.runWithImage(main, SandboxOptions.defaults(), r.exec(), r.command(), true);
            if (ran != 0) {
                throw new IllegalStateException("the stand-in's run exited " + ran);
            }
            done.add("run");
            // an error as the daemon answers it, printed as Main prints it
            try {
                d.call("GET", "/v1/sandboxes/missing");
                throw new IllegalStateException("the stand-in daemon did not refuse");
            } catch (dev.kosa8.host.KosaException e) {
                Main.report(e, new java.io.PrintWriter(quiet, true), false);
                done.add("an error");
            }
            daemon.interrupt();
        } finally {
            System.setOut(out);
            System.setErr(err);
            Files.deleteIfExists(paths.daemonSocket());
            Files.deleteIfExists(paths.daemonBuild());
            Files.deleteIfExists(paths.runtime());
            Files.deleteIfExists(dir);
        }
        return done;
    }

    /**
     * The classes of the hot path that no trained line runs, linked here: the
     * crash hook, which only the entry points may install, and the exception
     * that verifying it loads; {@link CliExit}, whose
     * halt would end the training; what {@code run}'s image check reads only
     * when there is an image (none in the training's home), the
     * terminal's of {@code exec -t} (no terminal here), and the mount table
     * {@code run} reads only under WSL. The JVM leaves a loaded but unlinked class
     * out of the AOT cache, and the first start that needs one then opens the
     * 47 MB jar to find it (its central directory read: about 20 ms).
     * Picocli's own classes cannot be kept at all (compiled for Java 5): the
     * hot path must not load them ({@link UsageError}).
     */
    private static void linkWhatNoLineRuns() throws ClassNotFoundException {
        for (String c : List.of(dev.kosa8.host.CrashPoints.class.getName(),
                dev.kosa8.host.CrashPoints.InjectedFault.class.getName(), CliExit.class.getName(),
                "dev.kosa8.image.WorkspaceModule", Terminal.class.getName(), // the image's: not public
                dev.kosa8.host.Mounts.class.getName(), dev.kosa8.host.Mounts.Mount.class.getName())) {
            Class.forName(c, true, AotTraining.class.getClassLoader());
        }
    }

    /** The stand-in daemon: fixed answers, one connection at a time, until the socket closes. */
    private static void serve(ServerSocketChannel server) {
        while (server.isOpen()) {
            try (SocketChannel ch = server.accept()) {
                InputStream in = Channels.newInputStream(ch);
                OutputStream out = Channels.newOutputStream(ch);
                String request = head(in);
                String[] first = request.lines().findFirst().orElse("").split(" ");
                String method = first[0];
                String path = first.length > 1 ? first[1].replaceFirst("\\?.*", "") : "";
                if (path.endsWith("/exec") || path.equals("/v1/run")) {
                    exec(in, out);
                    continue;
                }
                int status = 200;
                String body = switch (method + " " + path) {
                    case "GET /v1/version" -> "{\"version\":\"0\",\"build\":\"" + BuildId.current() + "\",\"pid\":1}";
                    case "GET /v1/sandboxes" -> "[{\"id\":\"0123456789ab\",\"state\":\"running\",\"ephemeral\":false,"
                            + "\"cpus\":2,\"memoryMiB\":1024,\"accelerator\":\"tcg\",\"created\":\"2026-01-01T00:00:00Z\"}]";
                    case "POST /v1/sandboxes/0123456789ab/checkpoints" -> CHECKPOINT;
                    case "GET /v1/sandboxes/0123456789ab/checkpoints" -> "[" + CHECKPOINT + "]";
                    case "POST /v1/sandboxes/0123456789ab/rewind" -> "{\"id\":\"c20260101T000000-0000\",\"rewindMillis\":1}";
                    case "GET /v1/held/0123456789ab" -> "{\"count\":0}";
                    default -> {
                        status = 404;
                        yield "{\"kind\":\"USAGE\",\"error\":\"no such thing\",\"suggestion\":\"none\"}";
                    }
                };
                byte[] b = body.getBytes(StandardCharsets.UTF_8);
                out.write(("HTTP/1.1 " + status + " X\r\nContent-Type: application/json\r\nContent-Length: " + b.length
                        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(b);
                out.flush();
            } catch (IOException e) {
                if (!server.isOpen()) {
                    return; // closed: training is over
                }
                // a connection closed without a request: the CLI's check that something listens
            }
        }
    }

    private static final String CHECKPOINT = "{\"id\":\"c20260101T000000-0000\",\"created\":\"2026-01-01T00:00:00.1Z\","
            + "\"message\":\"x\",\"state\":\"pending\",\"pauseMillis\":1,\"workspaceBytesCopied\":0,\"bytesOnDisk\":0}";

    /** An exec stream: switched, the command's stdin read to its end, then its exit. */
    private static void exec(InputStream in, OutputStream out) throws IOException {
        out.write(("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: kosa8-stream\r\n"
                + DaemonConnection.SANDBOX_HEADER + ": 0123456789ab\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        FrameReader r = new FrameReader(in);
        FrameWriter w = new FrameWriter(out);
        int channel = 1;
        for (Message m = r.read(); m != null; m = r.read()) {
            if (m instanceof Message.Exec e) {
                channel = e.channel();
            } else if (m instanceof Message.Eof) {
                w.write(new Message.Exited(channel, 0, 0));
                out.flush();
                return;
            }
        }
    }

    private static String head(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int state = 0;
        while (state < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("closed");
            }
            buf.write(b);
            state = (b == '\r' && (state == 0 || state == 2)) ? state + 1 : (b == '\n' && (state == 1 || state == 3))
                    ? state + 1 : 0;
        }
        return buf.toString(StandardCharsets.ISO_8859_1);
    }
}
