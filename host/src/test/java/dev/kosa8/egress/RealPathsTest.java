package dev.kosa8.egress;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RealPathsTest {
    @TempDir
    Path dir;

    @Test
    void aFileInsideTheFolderOrTheFolderItselfIsFoundAsGiven() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("a/b"));
        Path file = Files.writeString(folder.resolve("settings.json"), "{}");
        Path outside = Files.writeString(dir.resolve("elsewhere.json"), "{}");

        assertThat(RealPaths.firstInside(List.of(outside, file), folder)).contains(file);
        assertThat(RealPaths.firstInside(List.of(folder), folder)).contains(folder);
        assertThat(RealPaths.firstInside(List.of(outside), folder)).isEmpty();
        assertThat(RealPaths.firstInside(List.of(), folder)).isEmpty();
    }

    @Test
    void aSiblingWhoseNameSharesTheFoldersPrefixIsNotInside() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("a/b"));
        Path sibling = Files.createDirectories(dir.resolve("a/bc"));
        Path file = Files.writeString(sibling.resolve("ca.pem"), "");

        assertThat(RealPaths.firstInside(List.of(sibling, file), folder)).isEmpty();
    }

    @Test
    void aSymbolicLinkOnEitherSideDoesNotHideAFileInside() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("ws"));
        Path file = Files.writeString(folder.resolve("ca.pem"), "");
        Path linkToFolder = Files.createSymbolicLink(dir.resolve("ws-link"), folder);
        Path linkToFile = Files.createSymbolicLink(dir.resolve("ca-link.pem"), file);

        assertThat(RealPaths.firstInside(List.of(linkToFolder.resolve("ca.pem")), folder)).isPresent();
        assertThat(RealPaths.firstInside(List.of(linkToFile), folder)).contains(linkToFile);
        assertThat(RealPaths.firstInside(List.of(file), linkToFolder)).contains(file);
    }

    @Test
    void aPathThatDoesNotExistYetCountsAsWhereItWouldBe() throws Exception {
        Path folder = Files.createDirectories(dir.resolve("ws"));
        Path link = Files.createSymbolicLink(dir.resolve("ws-link"), folder);
        Path notYet = link.resolve("config/kosa8");

        assertThat(RealPaths.of(notYet)).isEqualTo(folder.toRealPath().resolve("config/kosa8"));
        assertThat(RealPaths.firstInside(List.of(notYet), folder)).contains(notYet);
        assertThat(RealPaths.firstInside(List.of(folder.resolve("config")), link.resolve("config")))
                .isPresent();
        assertThat(RealPaths.firstInside(List.of(dir.resolve("wsx/config")), dir.resolve("ws")))
                .isEmpty();
    }
}
