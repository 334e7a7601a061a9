package dev.kosa8.image.oci;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.KosaException;
import dev.kosa8.image.ImageConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An image archive as {@code docker save} writes it ({@code manifest.json},
 * each layer a tar) or as the OCI image layout has it ({@code index.json},
 * {@code blobs/sha256/…}), in a tar file (gzip-compressed or not) or a
 * folder: its config and its layers, each blob's digest checked before it is
 * used. Only the archive's regular files are kept, under names kosa8 makes
 * ({@code m0}, {@code m1}…), never the archive's own; a link between members
 * ({@code docker save} links layers it already wrote) is followed within the
 * archive only.
 */
public final class ImageArchive implements AutoCloseable {
    /** One layer: where its blob is, how it is compressed, and the digests it must have. */
    public record Layer(Path blob, String compression, String blobDigest, String diffId) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MT_INDEX = "application/vnd.oci.image.index.v1+json";
    private static final String MT_DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json";

    private final Path scratch;
    private final Map<String, Path> members;
    private final ImportLimits limits;
    private final String what;
    private final boolean ownScratch;

    private ImageConfig config;
    private String configDigest;
    private List<Layer> layers;
    private String refName = "";

    private ImageArchive(Path scratch, Map<String, Path> members, ImportLimits limits, String what,
                         boolean ownScratch) {
        this.scratch = scratch;
        this.members = members;
        this.limits = limits;
        this.what = what;
        this.ownScratch = ownScratch;
    }

    /**
     * Reads an archive (a tar file, or a folder in either layout), keeping its members in {@code scratch}.
     *
     * @throws KosaException naming the archive and what is wrong with it
     */
    public static ImageArchive open(Path archive, Path scratch, ImportLimits limits) throws IOException {
        String what = "image archive " + archive;
        ImageArchive a;
        if (Files.isDirectory(archive)) {
            a = new ImageArchive(scratch, ArchiveMembers.inFolder(archive), limits, what, false);
        } else if (Files.isRegularFile(archive)) {
            a = new ImageArchive(scratch, ArchiveMembers.inTar(archive, scratch, limits, what), limits, what, true);
        } else {
            throw new KosaException(KosaException.Kind.USAGE, "no image archive at " + archive,
                    "give a file made by `docker save` or `skopeo copy … oci-archive:FILE`, or an OCI layout folder");
        }
        a.read();
        return a;
    }

    public ImageConfig config() {
        return config;
    }

    /** The config blob's digest ({@code sha256:…}): the image's id. */
    public String configDigest() {
        return configDigest;
    }

    public List<Layer> layers() {
        return layers;
    }

    /** The name the archive gives the image (a {@code docker save} tag, an OCI ref name), or empty. */
    public String refName() {
        return refName;
    }

    /**
     * The uncompressed stream of a layer's blob, bounded ({@link LayerStream}).
     *
     * @param what how errors name the layer
     */
    public InputStream open(Layer l, String what) throws IOException {
        return LayerStream.open(l.blob(), l.compression(), limits, what);
    }

    private void read() throws IOException {
        if (members.containsKey("index.json")) {
            readOci();
        } else if (members.containsKey("manifest.json")) {
            readDocker();
        } else {
            throw bad("it has neither index.json (an OCI layout) nor manifest.json (docker save)");
        }
        if (layers.size() > limits.maxLayers()) {
            throw bad("it has " + layers.size() + " layers, over the limit of " + limits.maxLayers());
        }
    }

    private void readOci() throws IOException {
        JsonNode index = json(member("index.json"), "index.json");
        JsonNode desc = choose(index, "index.json");
        for (int depth = 0; isIndex(desc); depth++) {
            if (depth > 2) {
                throw bad("its indexes nest deeper than 3");
            }
            desc = choose(json(blob(desc), "an index"), "an index");
        }
        refName = desc.path("annotations").path("org.opencontainers.image.ref.name").asText("");
        JsonNode manifest = json(blob(desc), "the manifest");
        JsonNode cfgDesc = manifest.path("config");
        JsonNode cfg = json(blob(cfgDesc), "the config");
        configDigest = cfgDesc.path("digest").asText();
        List<String> diffIds = diffIds(cfg);
        JsonNode ls = manifest.path("layers");
        if (!ls.isArray() || ls.size() != diffIds.size()) {
            throw bad("its manifest lists " + ls.size() + " layers, its config " + diffIds.size());
        }
        if (ls.size() > limits.maxLayers()) {
            throw bad("it has " + ls.size() + " layers, over the limit of " + limits.maxLayers());
        }
        List<Layer> out = new ArrayList<>();
        for (int i = 0; i < ls.size(); i++) {
            JsonNode l = ls.get(i);
            String mt = l.path("mediaType").asText("");
            Path b = blob(l);
            String compression = compression(mt, b);
            out.add(new Layer(b, compression, l.path("digest").asText(), diffIds.get(i)));
        }
        layers = out;
        config = config(cfg);
    }

    private void readDocker() throws IOException {
        JsonNode m = json(member("manifest.json"), "manifest.json");
        if (!m.isArray() || m.isEmpty()) {
            throw bad("its manifest.json lists no image");
        }
        if (m.size() > 1) {
            throw bad("it holds " + m.size() + " images; kosa8 imports one at a time");
        }
        JsonNode e = m.get(0);
        if (e.path("RepoTags").isArray() && !e.path("RepoTags").isEmpty()) {
            refName = e.path("RepoTags").get(0).asText("");
        }
        Path cfgFile = member(e.path("Config").asText(""));
        byte[] cfgBytes = small(cfgFile, "the config");
        configDigest = "sha256:" + sha256(cfgBytes);
        JsonNode cfg = parse(cfgBytes, "the config");
        List<String> diffIds = diffIds(cfg);
        JsonNode ls = e.path("Layers");
        if (!ls.isArray() || ls.size() != diffIds.size()) {
            throw bad("its manifest.json lists " + ls.size() + " layers, its config " + diffIds.size());
        }
        if (ls.size() > limits.maxLayers()) {
            throw bad("it has " + ls.size() + " layers, over the limit of " + limits.maxLayers());
        }
        List<Layer> out = new ArrayList<>();
        for (int i = 0; i < ls.size(); i++) {
            Path b = member(ls.get(i).asText(""));
            out.add(new Layer(b, LayerStream.sniff(b), "", diffIds.get(i)));
        }
        layers = out;
        config = config(cfg);
    }

    /**
     * A layer's compression from its media type ({@code …tar+gzip}, {@code …tar+zstd}, Docker's
     * {@code …tar.gzip}, {@code …tar}), else from its first bytes; another suffix ({@code +bzip2}) is kept, and
     * {@link LayerStream} refuses it by name.
     */
    private static String compression(String mediaType, Path blob) throws IOException {
        if (mediaType.endsWith("+gzip") || mediaType.endsWith(".gzip")) {
            return "gzip";
        }
        if (mediaType.endsWith("+zstd") || mediaType.endsWith(".zstd")) {
            return "zstd";
        }
        if (mediaType.endsWith(".tar") || mediaType.endsWith(".diff.tar")) {
            return "none";
        }
        int plus = mediaType.lastIndexOf('+');
        return plus > 0 && mediaType.contains(".tar+") ? mediaType.substring(plus + 1) : LayerStream.sniff(blob);
    }

    private boolean isIndex(JsonNode desc) {
        String mt = desc.path("mediaType").asText("");
        return mt.equals(MT_INDEX) || mt.equals(MT_DOCKER_LIST);
    }

    /** The manifest of an index for linux/amd64, or its only one. */
    private JsonNode choose(JsonNode index, String where) {
        JsonNode ms = index.path("manifests");
        if (!ms.isArray() || ms.isEmpty()) {
            throw bad(where + " lists no manifest");
        }
        if (ms.size() == 1) {
            return ms.get(0);
        }
        List<String> seen = new ArrayList<>();
        for (JsonNode d : ms) {
            JsonNode p = d.path("platform");
            String plat = p.path("os").asText("?") + "/" + p.path("architecture").asText("?");
            if (plat.equals("linux/amd64")) {
                return d;
            }
            seen.add(plat);
        }
        throw bad(where + " has no linux/amd64 image (it has " + seen + "); kosa8's guests are x86-64");
    }

    private List<String> diffIds(JsonNode cfg) {
        String arch = cfg.path("architecture").asText("amd64");
        if (!arch.equals("amd64")) {
            throw bad("the image is for " + arch + "; kosa8's guests are x86-64 (amd64)");
        }
        JsonNode ids = cfg.path("rootfs").path("diff_ids");
        if (!ids.isArray()) {
            throw bad("its config has no rootfs.diff_ids");
        }
        if (ids.size() > limits.maxLayers()) {
            throw bad("its config lists " + ids.size() + " layers, over the limit of " + limits.maxLayers());
        }
        List<String> out = new ArrayList<>();
        ids.forEach(d -> out.add(checkDigest(d.asText(""))));
        return out;
    }

    private static ImageConfig config(JsonNode cfg) {
        JsonNode c = cfg.path("config");
        Map<String, String> labels = new LinkedHashMap<>();
        c.path("Labels").properties().forEach(e -> labels.put(e.getKey(), e.getValue().asText("")));
        return new ImageConfig(strings(c.path("Env")), c.path("WorkingDir").asText(""), c.path("User").asText(""),
                strings(c.path("Entrypoint")), strings(c.path("Cmd")), labels);
    }

    private static List<String> strings(JsonNode a) {
        List<String> out = new ArrayList<>();
        if (a.isArray()) {
            a.forEach(x -> out.add(x.asText("")));
        }
        return out;
    }

    /** A descriptor's blob, its digest and size checked. */
    private Path blob(JsonNode desc) throws IOException {
        String digest = checkDigest(desc.path("digest").asText(""));
        Path f = member("blobs/sha256/" + digest.substring("sha256:".length()));
        long size = desc.path("size").asLong(-1);
        if (size >= 0 && Files.size(f) != size) {
            throw bad("blob " + digest + " has " + Files.size(f) + " bytes, its descriptor says " + size);
        }
        String actual = "sha256:" + sha256(f);
        if (!actual.equals(digest)) {
            throw bad("blob " + digest + " does not match its digest (it is " + actual + ")");
        }
        return f;
    }

    private String checkDigest(String d) {
        if (!d.matches("sha256:[0-9a-f]{64}")) {
            throw bad("digest '" + d + "' is not a sha256 digest");
        }
        return d;
    }

    private Path member(String name) {
        List<String> parts = RootTree.components(name, what);
        Path p = members.get(String.join("/", parts));
        if (p == null) {
            throw bad("it has no member " + name);
        }
        return p;
    }

    private JsonNode json(Path f, String which) throws IOException {
        return parse(small(f, which), which);
    }

    private JsonNode parse(byte[] b, String which) {
        try {
            return JSON.readTree(b);
        } catch (IOException e) {
            throw bad(which + " is not JSON: " + e.getMessage());
        }
    }

    private byte[] small(Path f, String which) throws IOException {
        if (Files.size(f) > limits.maxJsonBytes()) {
            throw bad(which + " has " + Files.size(f) + " bytes, over the limit of " + limits.maxJsonBytes());
        }
        return Files.readAllBytes(f);
    }

    static String sha256(Path f) throws IOException {
        MessageDigest md = digest();
        try (InputStream in = new DigestInputStream(Files.newInputStream(f), md)) {
            in.transferTo(OutputStream.nullOutputStream());
        }
        return HexFormat.of().formatHex(md.digest());
    }

    static String sha256(byte[] b) {
        return HexFormat.of().formatHex(digest().digest(b));
    }

    static MessageDigest digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private KosaException bad(String problem) {
        return new KosaException(KosaException.Kind.IMAGE, what + ": " + problem + "; nothing was imported",
                "check the archive: make it again with `docker save` or `skopeo copy`, or import another");
    }

    /** Deletes the members kept while reading. */
    @Override
    public void close() throws IOException {
        if (ownScratch) {
            for (Path p : new java.util.HashSet<>(members.values())) {
                Files.deleteIfExists(p);
            }
        }
    }
}
