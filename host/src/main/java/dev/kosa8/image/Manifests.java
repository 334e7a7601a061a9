package dev.kosa8.image;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** Reads and writes manifests as JSON, writing to a temporary name and renaming. */
final class Manifests {
    static final String FILE = "manifest.json";
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private Manifests() {
    }

    static void write(Path dir, Object manifest) throws IOException {
        Path tmp = dir.resolve(FILE + ".tmp");
        JSON.writeValue(tmp.toFile(), manifest);
        Files.move(tmp, dir.resolve(FILE), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    static <T> T read(Path dir, Class<T> type) throws IOException {
        return JSON.readValue(dir.resolve(FILE).toFile(), type);
    }
}
