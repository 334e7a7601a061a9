package dev.kosa8.image.oci;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Writes image archives for the tests: an OCI layout or a {@code docker save} tarball of the given layers. */
public final class TestImages {
    private static final ObjectMapper JSON = new ObjectMapper();

    private TestImages() {
    }

    /** The config JSON of an amd64 image with these layers' uncompressed bytes. */
    public static byte[] config(List<byte[]> layers, List<String> cmd, String user, String workingDir,
                                List<String> env) {
        ObjectNode c = JSON.createObjectNode();
        c.put("architecture", "amd64").put("os", "linux");
        ObjectNode cfg = c.putObject("config");
        cmd.forEach(cfg.putArray("Cmd")::add);
        env.forEach(cfg.putArray("Env")::add);
        cfg.put("User", user).put("WorkingDir", workingDir);
        ObjectNode rootfs = c.putObject("rootfs");
        rootfs.put("type", "layers");
        ArrayNode ids = rootfs.putArray("diff_ids");
        for (byte[] l : layers) {
            ids.add("sha256:" + ImageArchive.sha256(l));
        }
        return c.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** An OCI image layout as a tar: gzip-compressed layers, {@code ref} as its ref name. */
    public static byte[] ociArchive(List<byte[]> layers, byte[] config, String ref) throws IOException {
        return ociArchive(layers, config, ref, "gzip");
    }

    /**
     * An OCI image layout as a tar, its layers compressed with {@code gzip} or {@code zstd} (by the real
     * {@code zstd} program, as registries' zstd layers are made), {@code ref} as its ref name.
     */
    public static byte[] ociArchive(List<byte[]> layers, byte[] config, String ref, String compression)
            throws IOException {
        TestTar tar = new TestTar();
        tar.file("oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}");
        ObjectNode m = JSON.createObjectNode();
        m.put("schemaVersion", 2).put("mediaType", "application/vnd.oci.image.manifest.v1+json");
        m.set("config", descriptor("application/vnd.oci.image.config.v1+json", config));
        ArrayNode ls = m.putArray("layers");
        List<byte[]> blobs = new ArrayList<>(List.of(config));
        for (byte[] l : layers) {
            byte[] blob = compression.equals("zstd") ? zstd(l) : gzip(l);
            ls.add(descriptor("application/vnd.oci.image.layer.v1.tar+" + compression, blob));
            blobs.add(blob);
        }
        byte[] manifest = m.toString().getBytes(StandardCharsets.UTF_8);
        blobs.add(manifest);
        ObjectNode index = JSON.createObjectNode();
        index.put("schemaVersion", 2);
        ObjectNode d = descriptor("application/vnd.oci.image.manifest.v1+json", manifest);
        d.putObject("annotations").put("org.opencontainers.image.ref.name", ref);
        index.putArray("manifests").add(d);
        tar.file("index.json", index.toString());
        tar.dir("blobs/").dir("blobs/sha256/");
        for (byte[] b : blobs) {
            tar.file("blobs/sha256/" + ImageArchive.sha256(b), 0644, 0, 0, b);
        }
        return tar.bytes();
    }

    /** A {@code docker save} tarball: uncompressed layers, the second copy of a layer a link to the first. */
    public static byte[] dockerArchive(List<byte[]> layers, byte[] config, String tag) {
        TestTar tar = new TestTar();
        String cfgName = ImageArchive.sha256(config) + ".json";
        tar.file(cfgName, 0644, 0, 0, config);
        ArrayNode names = JSON.createArrayNode();
        for (int i = 0; i < layers.size(); i++) {
            String dir = "layer" + i;
            tar.dir(dir + "/").file(dir + "/layer.tar", 0644, 0, 0, layers.get(i));
            names.add(dir + "/layer.tar");
        }
        ObjectNode e = JSON.createObjectNode();
        e.put("Config", cfgName);
        e.putArray("RepoTags").add(tag);
        e.set("Layers", names);
        tar.file("manifest.json", JSON.createArrayNode().add(e).toString());
        return tar.bytes();
    }

    public static Path write(Path file, byte[] bytes) throws IOException {
        return Files.write(file, bytes);
    }

    private static ObjectNode descriptor(String mediaType, byte[] blob) {
        ObjectNode d = JSON.createObjectNode();
        d.put("mediaType", mediaType).put("digest", "sha256:" + ImageArchive.sha256(blob)).put("size", blob.length);
        return d;
    }

    /** {@code b} compressed by the {@code zstd} program (Debian's {@code zstd}, scripts/host-setup.sh). */
    public static byte[] zstd(byte[] b, String... options) throws IOException {
        List<String> argv = new ArrayList<>(List.of("zstd", "-q", "-c"));
        argv.addAll(List.of(options));
        Process p = new ProcessBuilder(argv).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        Thread feed = Thread.ofVirtual().start(() -> {
            try (var in = p.getOutputStream()) {
                in.write(b);
            } catch (IOException e) {
                // the process's exit status tells
            }
        });
        byte[] out = p.getInputStream().readAllBytes();
        try {
            feed.join();
            if (p.waitFor() != 0) {
                throw new IOException("zstd exited with " + p.exitValue());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        return out;
    }

    static byte[] gzip(byte[] b) throws IOException {
        var out = new java.io.ByteArrayOutputStream();
        try (var g = new java.util.zip.GZIPOutputStream(out)) {
            g.write(b);
        }
        return out.toByteArray();
    }
}
