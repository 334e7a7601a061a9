package dev.kosa8.mcp;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kosa8.host.AtomicFile;
import dev.kosa8.host.HostPaths;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * {@code mcp-http.json} in kosa8's runtime folder (a folder only the user may enter): where the running
 * {@code kosa8 mcp --http} listens and its token, for a client or script to be configured from. The file is
 * created readable by the user alone (0600) and removed when that server stops, if it is still that server's.
 */
public record McpHttpEndpoint(Path file, String url, String token, long pid) {
    public static final String NAME = "mcp-http.json";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The file for this server in {@code paths}' runtime folder (made private if new). */
    public static McpHttpEndpoint of(HostPaths paths, String url, McpHttpToken token) {
        Path dir = HostPaths.privateDirectory(paths.runtime());
        return new McpHttpEndpoint(dir.resolve(NAME), url, token.value(), ProcessHandle.current().pid());
    }

    /** Writes it whole, mode 0600 from its creation. */
    public void write() throws IOException {
        ObjectNode o = JSON.createObjectNode();
        o.put("url", url);
        o.put("token", token);
        o.putObject("headers").put("Authorization", "Bearer " + token);
        o.put("pid", pid);
        AtomicFile.write(file, PosixFilePermissions.fromString("rw-------"),
                JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(o));
    }

    /** Removes it if it is still this server's (another started since owns it then). */
    public void removeIfOurs() {
        try {
            if (Files.exists(file) && JSON.readTree(file.toFile()).path("pid").asLong() == pid) {
                Files.deleteIfExists(file);
            }
        } catch (IOException | RuntimeException e) {
            // best effort: a stale file names a server that no longer answers
        }
    }
}
