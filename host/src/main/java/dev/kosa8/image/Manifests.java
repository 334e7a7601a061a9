package dev.kosa8.image;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.kosa8.host.RecordFile;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Reads and writes manifests as {@link RecordFile}s: {@code kosa8-part} (a
 * built part's, {@link PartManifest}) and {@code kosa8-image} (an image's,
 * {@link ImageManifest}), version 1, the manifest under {@code manifest},
 * with its SHA-256; written to a temporary name and renamed.
 *
 * <p>Manifests written by a kosa8 from before the checksum (the manifest
 * alone, with its own numeric {@code format}) are read as they are, without
 * a word: the images users have built keep working, a part's manifest is
 * only believed together with the part's files, and what to do about any
 * damage is the same either way (build the image again).
 */
final class Manifests {
    static final String FILE = "manifest.json";
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    private static final String REMEDY = "remove the images folder and run `kosa8 image build`";
    private static final RecordFile<PartManifest> PART = new RecordFile<>("kosa8-part", 1, "manifest",
            PartManifest.class, JSON, RecordFile.Unchecked.READ, REMEDY);
    private static final RecordFile<ImageManifest> IMAGE = new RecordFile<>("kosa8-image", 1, "manifest",
            ImageManifest.class, JSON, RecordFile.Unchecked.READ, REMEDY);

    private Manifests() {
    }

    static void write(Path dir, PartManifest manifest) throws IOException {
        PART.write(dir.resolve(FILE), manifest);
    }

    static void write(Path dir, ImageManifest manifest) throws IOException {
        IMAGE.write(dir.resolve(FILE), manifest);
    }

    static PartManifest readPart(Path dir) throws IOException {
        return PART.read(dir.resolve(FILE));
    }

    static ImageManifest readImage(Path dir) throws IOException {
        return IMAGE.read(dir.resolve(FILE));
    }
}
