package dev.kosa8.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class UnifiedDiffTest {
    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aChangedLineAndAnAddedLastLineWithoutNewlineAreHunksWithTheirCounts() {
        UnifiedDiff.Hunks h = UnifiedDiff.of(b("a\nb\nc\n"), b("a\nB\nc\nd"));
        assertThat(h.text()).isEqualTo("""
                @@ -1,3 +1,4 @@
                 a
                -b
                +B
                 c
                +d
                \\ No newline at end of file
                """);
        assertThat(h.added()).isEqualTo(2);
        assertThat(h.removed()).isEqualTo(1);
    }

    @Test
    void onlyANewlineAtTheEndIsADifference() {
        UnifiedDiff.Hunks h = UnifiedDiff.of(b("x"), b("x\n"));
        assertThat(h.text()).isEqualTo("""
                @@ -1,1 +1,1 @@
                -x
                \\ No newline at end of file
                +x
                """);
    }

    @Test
    void anAbsentSideIsEmptyAndFarChangesAreSeparateHunksWithThreeLinesOfContext() {
        assertThat(UnifiedDiff.of(null, b("new\n")).text()).isEqualTo("@@ -0,0 +1,1 @@\n+new\n");
        StringBuilder a = new StringBuilder();
        StringBuilder c = new StringBuilder();
        for (int i = 1; i <= 20; i++) {
            a.append(i).append('\n');
            c.append(i == 2 ? "two" : i == 19 ? "nineteen" : String.valueOf(i)).append('\n');
        }
        String before = a.toString();
        String after = c.toString();
        UnifiedDiff.Hunks h = UnifiedDiff.of(b(before), b(after));
        assertThat(h.text()).startsWith("@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n").contains("@@ -16,5 +16,5 @@\n");
        assertThat(h.text()).doesNotContain(" 10\n");
    }

    @Test
    void binaryAndLargeFilesAreNotDiffed() {
        assertThat(UnifiedDiff.of(b("a\n"), new byte[] {'a', 0, 'b'})).isNull();
        assertThat(UnifiedDiff.of(new byte[UnifiedDiff.MAX_BYTES + 1], b("a\n"))).isNull();
        assertThat(UnifiedDiff.isText(null)).isTrue();
    }
}
