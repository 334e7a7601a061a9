package dev.kosa8.image;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.kosa8.host.KosaException;
import dev.kosa8.host.RecordFile;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The images users built or imported, by name ({@code images/named/}).
 * kosa8's own image, {@value NamedImage#DEFAULT}, is not here: it is the
 * current system image ({@link ImageStore}).
 */
public final class NamedImages {
    static final String DIR = "named";
    private static final String FILE = "image.json";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    private static final RecordFile<NamedImage> RECORD = new RecordFile<>("kosa8-named-image", 1, "image",
            NamedImage.class, JSON, RecordFile.Unchecked.REFUSE, "build or import the image again");

    private final Path root;

    public NamedImages(Path images) {
        this.root = images.resolve(DIR);
    }

    /** Every named image, newest first; a damaged record is left out (and named by {@link #find}). */
    public List<NamedImage> list() {
        List<NamedImage> out = new ArrayList<>();
        if (!Files.isDirectory(root)) {
            return out;
        }
        try (DirectoryStream<Path> s = Files.newDirectoryStream(root)) {
            for (Path d : s) {
                Path f = d.resolve(FILE);
                if (Files.isRegularFile(f)) {
                    try {
                        out.add(RECORD.read(f));
                    } catch (IOException e) {
                        // left out of the list; asked for by name it is refused with the reason
                    }
                }
            }
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.IMAGE, "cannot list the images in " + root + ": "
                    + e.getMessage(), "check the permissions of kosa8's data folder", e);
        }
        out.sort(Comparator.comparing(NamedImage::created).reversed());
        return out;
    }

    /** The image of this name, or of this id (16 hex digits, or a unique prefix of at least 6). */
    public Optional<NamedImage> find(String nameOrId) {
        if (NamedImage.isValidName(nameOrId)) {
            Path f = root.resolve(NamedImage.directoryName(nameOrId)).resolve(FILE);
            if (Files.isRegularFile(f)) {
                try {
                    return Optional.of(RECORD.read(f));
                } catch (RecordFile.Damaged d) {
                    throw new KosaException(KosaException.Kind.IMAGE, d.problem(), d.remedy(), d);
                } catch (IOException e) {
                    throw new KosaException(KosaException.Kind.IMAGE, "cannot read " + f + ": " + e.getMessage(),
                            "build or import the image again", e);
                }
            }
        }
        if (nameOrId.matches("[0-9a-f]{6,16}")) {
            List<NamedImage> byId = list().stream().filter(i -> i.id().startsWith(nameOrId)).toList();
            if (byId.stream().map(NamedImage::id).distinct().count() == 1) {
                return Optional.of(byId.getFirst());
            }
        }
        return Optional.empty();
    }

    /** Records an image under its name, replacing an earlier image of that name. */
    public void save(NamedImage image) throws IOException {
        Path dir = root.resolve(NamedImage.directoryName(image.name()));
        Files.createDirectories(dir);
        RECORD.write(dir.resolve(FILE), image);
    }

    /** Forgets an image's name (its layers stay in the step cache until a prune). */
    public boolean remove(String name) throws IOException {
        Path dir = root.resolve(NamedImage.directoryName(name));
        boolean had = Files.deleteIfExists(dir.resolve(FILE));
        Files.deleteIfExists(dir);
        return had;
    }
}
