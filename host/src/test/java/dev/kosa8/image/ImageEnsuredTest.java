package dev.kosa8.image;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.host.HostPaths;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ImageBuilder#ensuredBefore}: the image is taken as there without an
 * ensure only when the last ensure had these very inputs and found the image
 * that is still current and still complete.
 */
class ImageEnsuredTest {
    static final String ID = "0123456789abcdef";

    @TempDir
    Path home;

    HostPaths paths() {
        return new HostPaths(home.resolve("data"), home.resolve("cache"), home.resolve("run"));
    }

    ImageBuilder builder(String inputs) {
        return new ImageBuilder(paths(), step -> { }, Recipe.STANDARD,
                () -> { throw new AssertionError("the guest files are not read"); },
                new JavaRuntime(Path.of("/nonexistent"), "test 25"), false, inputs);
    }

    void stamp(String inputs, String id) throws Exception {
        stamp(inputs, WorkspaceModule.toolchain(), id);
    }

    void stamp(String inputs, String toolchain, String id) throws Exception {
        Files.writeString(paths().images().resolve(ImageBuilder.ENSURED), inputs + "\n" + toolchain + "\n" + id + "\n");
    }

    @Test
    void theCurrentImageEnsuredBeforeWithTheSameInputsNeedsNoEnsure() throws Exception {
        TestImages.make(paths(), ID, true);
        stamp("build-1 java-25", ID);
        assertThat(builder("build-1 java-25").ensuredBefore()).isTrue();
    }

    @Test
    void anotherBuildOrJavaEnsuresAgain() throws Exception {
        TestImages.make(paths(), ID, true);
        stamp("build-1 java-25", ID);
        assertThat(builder("build-2 java-25").ensuredBefore()).isFalse();
        assertThat(builder("build-1 java-26").ensuredBefore()).isFalse();
    }

    @Test
    void aCompilerInstalledOrRemovedSinceEnsuresAgain() throws Exception {
        TestImages.make(paths(), ID, true);
        stamp("build-1 java-25", WorkspaceModule.toolchain() + " gcc-99", ID);
        assertThat(builder("build-1 java-25").ensuredBefore()).isFalse();
    }

    @Test
    void noStampOrUnknownInputsEnsuresAgain() throws Exception {
        TestImages.make(paths(), ID, true);
        assertThat(builder("build-1 java-25").ensuredBefore()).as("no stamp").isFalse();
        stamp("null", ID);
        assertThat(builder(null).ensuredBefore()).as("inputs not known").isFalse();
    }

    @Test
    void anImageNoLongerCurrentOrNoLongerCompleteEnsuresAgain() throws Exception {
        TestImages.make(paths(), ID, true);
        TestImages.make(paths(), "fedcba9876543210", false);
        stamp("build-1 java-25", "fedcba9876543210");
        assertThat(builder("build-1 java-25").ensuredBefore()).as("the stamp names an image not current").isFalse();
        stamp("build-1 java-25", ID);
        Path image = paths().images().resolve(ImageStore.IMAGE_DIR).resolve(ID);
        Files.delete(image.resolve(RootfsPart.FILE).toRealPath());
        assertThat(builder("build-1 java-25").ensuredBefore()).as("its root disk is gone").isFalse();
    }
}
