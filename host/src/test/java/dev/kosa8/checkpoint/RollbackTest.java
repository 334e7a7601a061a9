package dev.kosa8.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RollbackTest {
    private final List<String> log = new ArrayList<>();
    private final List<String> done = new ArrayList<>();
    private final Rollback rollback = new Rollback(log::add);

    @Test
    void unwindsNewestFirst() {
        rollback.push("a", () -> done.add("a"));
        rollback.push("b", () -> done.add("b"));
        rollback.push("c", () -> done.add("c"));
        rollback.unwind();
        assertThat(done).containsExactly("c", "b", "a");
        assertThat(rollback.isEmpty()).isTrue();
    }

    @Test
    void aFailingUndoDoesNotSkipTheRestAndIsLogged() {
        rollback.push("a", () -> done.add("a"));
        rollback.push("delete the disk snapshot", () -> {
            throw new IllegalStateException("QEMU is gone");
        });
        rollback.push("c", () -> done.add("c"));
        rollback.unwind();
        assertThat(done).containsExactly("c", "a");
        assertThat(log).containsExactly("checkpoint cleanup: cannot delete the disk snapshot: QEMU is gone");
    }

    @Test
    void aDroppedStepIsNotUndone() {
        rollback.push("a", () -> done.add("a"));
        Rollback.Entry b = rollback.push("b", () -> done.add("b"));
        b.drop();
        rollback.unwind();
        assertThat(done).containsExactly("a");
    }

    @Test
    void aStepGivenBackOnTheWayIsNotUndoneAgain() throws Exception {
        rollback.push("a", () -> done.add("a"));
        Rollback.Entry thaw = rollback.push("thaw", () -> done.add("thaw"));
        thaw.runNow();
        rollback.unwind();
        assertThat(done).containsExactly("thaw", "a");
    }

    @Test
    void aStepThatFailsToBeGivenBackIsTriedOnceMoreByTheUnwinding() {
        int[] calls = {0};
        Rollback.Entry thaw = rollback.push("thaw the guest", () -> {
            if (calls[0]++ == 0) {
                throw new IllegalStateException("agent busy");
            }
            done.add("thawed");
        });
        assertThatThrownBy(thaw::runNow).hasMessage("agent busy");
        rollback.unwind();
        assertThat(done).containsExactly("thawed");
    }
}
