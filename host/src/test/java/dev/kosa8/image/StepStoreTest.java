package dev.kosa8.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StepStoreTest {
    @TempDir
    Path images;

    @Test
    void aKeyDependsOnEveryPartAndOnlyOnThem() {
        String k = StepStore.key("p", "RUN [x]", "");
        assertThat(k).matches("[0-9a-f]{64}").isEqualTo(StepStore.key("p", "RUN [x]", ""));
        assertThat(StepStore.key("p2", "RUN [x]", "")).isNotEqualTo(k);
        assertThat(StepStore.key("p", "RUN [y]", "")).isNotEqualTo(k);
        assertThat(StepStore.key("p", "RUN [x]", "h")).isNotEqualTo(k);
        assertThat(StepStore.key("pR", "UN [x]", "")).as("parts are length-prefixed").isNotEqualTo(k);
    }

    @Test
    void aStepIsFoundOnceCommittedWhileItsDiskIsThereAndSweptWhenNeverCommitted() throws Exception {
        StepStore s = new StepStore(images);
        String key = StepStore.key("", "RUN [true]", "");
        Path layer = Files.createDirectories(images.resolve("layers/l1")).resolve(StepStore.LAYER);
        Files.writeString(layer, "qcow2");
        StepRecord r = new StepRecord(key, "", "RUN true", layer.toString(), "sys", ImageConfig.NONE, "now", 1.5);
        assertThat(s.find(key)).isEmpty();
        s.commit(r);
        assertThat(s.find(key)).contains(r);
        assertThat(s.list()).containsExactly(r);

        String unfinished = StepStore.key("", "RUN [false]", "");
        Files.createDirectories(s.directory(unfinished));
        assertThat(s.sweep()).isEqualTo(1);
        assertThat(s.directory(unfinished)).doesNotExist();
        assertThat(s.find(key)).contains(r);

        Files.delete(layer);
        assertThat(s.find(key)).as("a step whose disk is gone is a miss").isEmpty();
        assertThatThrownBy(() -> s.directory("../x")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void namedImagesAreFoundByNameOrIdAndNamesAreChecked() throws Exception {
        NamedImages n = new NamedImages(images);
        NamedImage app = new NamedImage("team/app:1.2", "0123456789abcdef", "k", "/d", "sys", "kosa8/debian",
                ImageConfig.NONE.withEnv("A", "1"), "2026-12-01T00:00:00Z", 10);
        n.save(app);
        assertThat(n.find("team/app:1.2")).contains(app);
        assertThat(n.find("0123456")).contains(app);
        assertThat(n.find("team/app")).isEmpty();
        assertThat(n.list()).containsExactly(app);
        assertThat(images.resolve("named/team+app@1.2/image.json")).exists();
        Files.writeString(images.resolve("named/team+app@1.2/image.json"), "{\"tampered\": true}");
        assertThatThrownBy(() -> n.find("team/app:1.2")).isInstanceOf(KosaException.class);
        assertThat(n.remove("team/app:1.2")).isTrue();
        assertThat(n.find("team/app:1.2")).isEmpty();
        for (String bad : List.of("App", "../x", "a//b", "a:", "-a", "a/b:" + "t".repeat(129))) {
            assertThat(NamedImage.isValidName(bad)).as(bad).isFalse();
        }
        assertThat(NamedImage.isValidName("ghcr.io/org/img:v1.0")).isTrue();
    }
}
