package dev.kosa8.image.oci;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * A real registry on loopback for the tests: Debian's {@code docker-registry} (the CNCF distribution server),
 * over TLS with a self-signed certificate and htpasswd auth when asked, pushed to with Debian's {@code skopeo}.
 */
public final class TestRegistry implements AutoCloseable {
    public final int port;
    public final String user;
    public final String password;
    private final Path dir;
    private final Process process;

    /** @param user null for an anonymous registry over plain HTTP; else TLS and basic auth for this user */
    public TestRegistry(Path dir, String user, String password) throws Exception {
        this.dir = dir;
        this.user = user;
        this.password = password;
        Files.createDirectories(dir);
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        StringBuilder yml = new StringBuilder("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n"
                + "    rootdirectory: " + dir.resolve("data") + "\nhttp:\n  addr: 127.0.0.1:" + port + "\n");
        if (user != null) {
            run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", dir.resolve("key.pem").toString(),
                    "-out", dir.resolve("cert.pem").toString());
            String line = run("htpasswd", "-Bbn", user, password);
            Files.writeString(dir.resolve("htpasswd"), line.strip() + "\n");
            yml.append("  tls:\n    certificate: ").append(dir.resolve("cert.pem")).append("\n    key: ")
                    .append(dir.resolve("key.pem")).append("\nauth:\n  htpasswd:\n    realm: kosa8-test\n    path: ")
                    .append(dir.resolve("htpasswd")).append("\n");
        }
        Path config = Files.writeString(dir.resolve("config.yml"), yml.toString());
        process = new ProcessBuilder("docker-registry", "serve", config.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("registry.log").toFile()).start();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (true) {
            try (Socket s = new Socket("127.0.0.1", port)) {
                break;
            } catch (IOException e) {
                if (System.nanoTime() > deadline || !process.isAlive()) {
                    throw new IllegalStateException("the registry did not start: "
                            + Files.readString(dir.resolve("registry.log")));
                }
                Thread.sleep(100);
            }
        }
    }

    /** Pushes an OCI archive as {@code repo:tag} with skopeo; returns the pushed manifest's digest. */
    public String push(Path ociArchive, String repoTag) throws Exception {
        List<String> argv = new ArrayList<>(List.of("skopeo", "copy", "--quiet", "--dest-tls-verify=false",
                "--digestfile", dir.resolve("digest").toString()));
        if (user != null) {
            argv.add("--dest-creds");
            argv.add(user + ":" + password);
        }
        argv.add("oci-archive:" + ociArchive);
        argv.add("docker://127.0.0.1:" + port + "/" + repoTag);
        run(argv.toArray(String[]::new));
        return Files.readString(dir.resolve("digest")).strip();
    }

    /** A Docker config.json holding this registry's credentials, as `docker login` writes it. */
    public Path dockerConfig() throws IOException {
        String auth = Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
        return Files.writeString(dir.resolve("docker-config.json"), "{\"auths\": {\"127.0.0.1:" + port
                + "\": {\"auth\": \"" + auth + "\"}}}");
    }

    private static String run(String... argv) throws Exception {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IllegalStateException(String.join(" ", argv) + " failed: " + out);
        }
        return out;
    }

    @Override
    public void close() throws Exception {
        process.destroy();
        process.waitFor();
    }
}
