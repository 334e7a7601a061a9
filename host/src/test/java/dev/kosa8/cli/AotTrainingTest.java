package dev.kosa8.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import org.junit.jupiter.api.Test;

class AotTrainingTest {
    /** The launcher's training run: if a hot command stopped working against the stand-in, the cache would miss it. */
    @Test
    void theTrainingRunsEveryHotCommandAgainstItsStandInDaemon() throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        var done = AotTraining.train(new PrintStream(printed, true));
        assertThat(done).containsExactly("--version", "ls", "ls", "checkpoint", "checkpoints", "rewind", "exec",
                "the image check", "run", "an error");
        assertThat(printed.toString()).as("what the commands printed").contains("kosa8 ").contains("0123456789ab")
                .contains("c20260101T000000-0000").contains("kosa8: no such thing");
    }
}
