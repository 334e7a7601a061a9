package dev.kosa8.image.oci;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kosa8.host.KosaException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * The manifests, indexes and configs of an archive are untrusted JSON: whatever their fields hold (wrong types,
 * missing, absurd sizes, odd digests, other platforms), opening and applying gives an image or a KosaException,
 * never another exception. Digests are made to match the mutated bytes, so the decoders themselves are reached.
 */
class ImageArchiveFuzzTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final byte[] LAYER = new TestTar().dir("etc/").file("etc/a", "x").bytes();

    @Property(tries = 300)
    void mutatedManifestsIndexesAndConfigsOpenOrAreRefusedClearly(@ForAll @IntRange(min = 0, max = 1 << 30)
                                                                        int seed) throws Exception {
        Random rnd = new Random(seed);
        byte[] layerGz = TestImages.gzip(LAYER);
        ObjectNode config = (ObjectNode) JSON.readTree(TestImages.config(List.of(LAYER), List.of("sh"), "u", "/w",
                List.of("A=1")));
        mutate(config, rnd);
        byte[] cfg = JSON.writeValueAsBytes(config);
        ObjectNode manifest = F.objectNode();
        manifest.put("schemaVersion", 2).put("mediaType", "application/vnd.oci.image.manifest.v1+json");
        manifest.set("config", descriptor("application/vnd.oci.image.config.v1+json", cfg));
        manifest.putArray("layers").add(descriptor("application/vnd.oci.image.layer.v1.tar+gzip", layerGz));
        mutate(manifest, rnd);
        byte[] man = JSON.writeValueAsBytes(manifest);
        ObjectNode index = F.objectNode();
        index.put("schemaVersion", 2);
        ObjectNode d = descriptor("application/vnd.oci.image.manifest.v1+json", man);
        d.putObject("platform").put("os", "linux").put("architecture", "amd64");
        index.putArray("manifests").add(d);
        mutate(index, rnd);
        TestTar tar = new TestTar().file("index.json", 0644, 0, 0, JSON.writeValueAsBytes(index));
        for (byte[] b : List.of(cfg, man, layerGz)) {
            tar.file("blobs/sha256/" + ImageArchive.sha256(b), 0644, 0, 0, b);
        }
        Path dir = Files.createTempDirectory("kosa8-archive-fuzz");
        try {
            Path file = Files.write(dir.resolve("a.tar"), tar.bytes());
            try (ImageArchive a = ImageArchive.open(file, Files.createDirectory(dir.resolve("m")),
                    ImportLimits.DEFAULT)) {
                RootTree t = new RootTree(Files.createDirectory(dir.resolve("root")), ImportLimits.DEFAULT);
                for (ImageArchive.Layer l : a.layers()) {
                    ImageImport.apply(a, l, t, "layer", ImportLimits.DEFAULT);
                }
                assertThat(a.layers().size()).isLessThanOrEqualTo(ImportLimits.DEFAULT.maxLayers());
            } catch (KosaException e) {
                assertThat(e.getMessage()).isNotBlank();
            }
        } finally {
            dev.kosa8.host.FileTrees.delete(dir);
        }
    }

    private static ObjectNode descriptor(String mediaType, byte[] blob) {
        ObjectNode d = F.objectNode();
        d.put("mediaType", mediaType).put("digest", "sha256:" + ImageArchive.sha256(blob)).put("size", blob.length);
        return d;
    }

    /** Replaces 0-3 random nodes of the tree with random values, or removes them. */
    private static void mutate(ObjectNode root, Random rnd) {
        int n = rnd.nextInt(4);
        for (int i = 0; i < n; i++) {
            List<JsonNode> containers = new ArrayList<>();
            collect(root, containers);
            JsonNode c = containers.get(rnd.nextInt(containers.size()));
            if (c instanceof ObjectNode o && o.size() > 0) {
                List<String> names = new ArrayList<>();
                o.fieldNames().forEachRemaining(names::add);
                String name = names.get(rnd.nextInt(names.size()));
                if (rnd.nextInt(4) == 0) {
                    o.remove(name);
                } else {
                    o.set(name, value(rnd));
                }
            } else if (c instanceof ArrayNode a && a.size() > 0) {
                a.set(rnd.nextInt(a.size()), value(rnd));
            }
        }
    }

    private static void collect(JsonNode n, List<JsonNode> out) {
        if (n.isContainerNode()) {
            out.add(n);
            n.forEach(c -> collect(c, out));
        }
    }

    private static JsonNode value(Random rnd) {
        return switch (rnd.nextInt(9)) {
            case 0 -> F.nullNode();
            case 1 -> F.numberNode(rnd.nextLong());
            case 2 -> F.textNode("sha256:" + "0".repeat(rnd.nextInt(70)));
            case 3 -> F.textNode("../../etc/passwd");
            case 4 -> F.textNode("application/vnd.oci.image.index.v1+json");
            case 5 -> {
                ArrayNode a = F.arrayNode();
                for (int i = rnd.nextInt(300); i > 0; i--) {
                    a.add("sha256:" + "a".repeat(64));
                }
                yield a;
            }
            case 6 -> F.objectNode().put("architecture", "arm64").put("os", "linux");
            case 7 -> F.booleanNode(rnd.nextBoolean());
            default -> F.textNode(new String(new byte[] {(byte) rnd.nextInt(256)}, StandardCharsets.ISO_8859_1));
        };
    }

}
