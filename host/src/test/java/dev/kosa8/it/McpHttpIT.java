package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * {@code kosa8 mcp --http} driven by the official MCP TypeScript SDK's Streamable HTTP client (the npm package
 * McpIT pins) against real microVMs: the server started on a free port, its URL and token on stderr and in a 0600
 * mcp-http.json; the tools listed with the token; requests without a token, with a wrong one, from a foreign
 * Origin and with an oversized body refused (401, 401, 403, 413) with the server serving after each; a sandbox
 * created and {@code python3 -c 'print(6*7)'} answering 42, removed; a second session unable to remove the
 * first's sandbox, its own removed when it is deleted (HTTP DELETE); and at SIGTERM the open session's sandbox
 * removed, the kept one left, the endpoint file gone. The steps are in mcp-http-it.mjs.
 */
class McpHttpIT {
    private static final Pattern MADE = Pattern.compile("(?m)^(?:made|kept) ([0-9a-f]{12})$");
    private static final List<String> made = new ArrayList<>();

    @AfterAll
    static void removeLeftovers() {
        for (String id : made) {
            Kosa.run(Duration.ofMinutes(1), "rm", "-f", id);
        }
    }

    @Test
    void theOfficialTypeScriptClientDrivesTheToolsOverHttpBehindTheTokenAndOriginChecks() throws Exception {
        McpIT.onlyAsAnIntegrationTest();
        McpIT.installClient();
        ProcessBuilder pb = new ProcessBuilder("node", McpIT.CLIENT.resolve("mcp-http-it.mjs").toString(),
                new ObjectMapper().writeValueAsString(Kosa.command()));
        pb.environment().putAll(Kosa.builder().environment());
        pb.directory(Kosa.CWD.toFile()).redirectErrorStream(true);
        Process p = pb.start();
        StringBuilder out = new StringBuilder();
        Thread reader = Thread.ofVirtual().start(() -> {
            try {
                p.getInputStream().transferTo(new OutputStream() {
                    @Override
                    public void write(int b) {
                        write(new byte[] {(byte) b}, 0, 1);
                    }

                    @Override
                    public void write(byte[] b, int off, int len) {
                        String s = new String(b, off, len, StandardCharsets.UTF_8);
                        synchronized (out) {
                            out.append(s);
                        }
                        System.out.print(s);
                    }
                });
            } catch (IOException ignored) {
                // the client ended
            }
        });
        boolean done = p.waitFor(20, TimeUnit.MINUTES);
        if (!done) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        reader.join(5000);
        String log;
        synchronized (out) {
            log = out.toString();
        }
        Matcher m = MADE.matcher(log);
        while (m.find()) {
            made.add(m.group(1));
        }
        assertThat(done).as("the client finished within 20 minutes:\n%s%s", log, Kosa.consoles()).isTrue();
        assertThat(p.exitValue()).as("the client's steps:\n%s%s", log, Kosa.consoles()).isZero();
        for (String step : List.of("started", "list-tools", "unauthorized", "foreign-origin", "oversized-body",
                "create", "run 42", "second-session", "remove", "deleted-session-removed", "stopped-removed")) {
            assertThat(log).as("step %s", step).containsPattern("(?m)^ok " + Pattern.quote(step));
        }
        assertThat(made).hasSize(4);
    }
}
