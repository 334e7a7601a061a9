package dev.kosa8.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.kosa8.host.KosaException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestsTest {
    private static final String ID = "0123456789abcdef";
    private static final ImageManifest IMAGE = new ImageManifest(ImageManifest.FORMAT, ID, "2026-11-30T08:00:00Z",
            "6.1.0-57-amd64", new DebPackage("linux-image-6.1.0-57-amd64", "6.1.192-3", "amd64"),
            new DebPackage("busybox-static", "1:1.35.0-4", "amd64"),
            new PartHashes("ab".repeat(32), "cd".repeat(32), "ef".repeat(32)));
    private static final PartManifest PART = new PartManifest(PartManifest.FORMAT, "kernel", "ab".repeat(32),
            "2026-11-30T08:00:00Z", 12.5, Map.of("deb", "linux-image.deb"), Map.of("kernelVersion", "6.1.0-57-amd64"));

    @TempDir
    Path images;

    private Path imageDir() throws Exception {
        return Files.createDirectories(images.resolve(ImageStore.IMAGE_DIR).resolve(ID));
    }

    @Test
    void manifestsAreCheckedRecords() throws Exception {
        Path dir = imageDir();
        Manifests.write(dir, IMAGE);
        var json = new ObjectMapper().readTree(dir.resolve(Manifests.FILE).toFile());
        assertThat(json.path("format").asText()).isEqualTo("kosa8-image");
        assertThat(json.path("manifest").path("id").asText()).isEqualTo(ID);
        assertThat(new ImageStore(images).manifest(ID)).contains(IMAGE);

        Path part = Files.createDirectories(images.resolve("kernel").resolve(PART.hash()));
        Manifests.write(part, PART);
        assertThat(new ObjectMapper().readTree(part.resolve(Manifests.FILE).toFile()).path("format").asText())
                .isEqualTo("kosa8-part");
        assertThat(Manifests.readPart(part)).isEqualTo(PART);
        assertThatThrownBy(() -> Manifests.readImage(part)).as("a part's manifest is no image's")
                .hasMessageContaining("it is not a kosa8-image file");
    }

    @Test
    void aManifestFromBeforeTheChecksumIsReadAsItIs() throws Exception {
        // as kosa8 wrote manifests until 2026-12: the manifest alone
        ObjectMapper earlier = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
                .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);
        Path dir = imageDir();
        earlier.writeValue(dir.resolve(Manifests.FILE).toFile(), IMAGE);
        assertThat(new ImageStore(images).manifest(ID)).contains(IMAGE);
        Path part = Files.createDirectories(images.resolve("kernel").resolve(PART.hash()));
        earlier.writeValue(part.resolve(Manifests.FILE).toFile(), PART);
        assertThat(Manifests.readPart(part)).isEqualTo(PART);
    }

    @Test
    void aDamagedImageManifestIsAnErrorNamingTheFileAndWhatToDo() throws Exception {
        Path dir = imageDir();
        Manifests.write(dir, IMAGE);
        Path file = dir.resolve(Manifests.FILE);
        Files.writeString(file, Files.readString(file).replace("6.1.0-57-amd64", "6.1.0-58-amd64"));
        assertThatThrownBy(() -> new ImageStore(images).manifest(ID)).isInstanceOfSatisfying(KosaException.class,
                e -> {
                    assertThat(e.getMessage()).isEqualTo(file + " is damaged: checksum mismatch: its content is not"
                            + " what was written (changed, or cut short, since)");
                    assertThat(e.suggestion()).isEqualTo("remove the images folder and run `kosa8 image build`");
                    assertThat(e.kind()).isEqualTo(KosaException.Kind.IMAGE);
                });
    }
}
