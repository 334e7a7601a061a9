package dev.kosa8.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The commit under way of one sandbox, without a machine: jobs that end when the test lets them. */
class CommitsTest {
    private static final String FIRST = "c20261130T081512-a3f9";
    private static final String SECOND = "c20261130T081600-0b1c";

    /** A commit that waits for {@link #release} and then commits or fails. */
    static final class Held implements Commits.Job {
        final String id;
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch started = new CountDownLatch(1);
        final List<String> events;
        volatile boolean cancelled;
        volatile String failure;

        Held(String id, List<String> events) {
            this.id = id;
            this.events = events;
        }

        @Override
        public String id() {
            return id;
        }

        @Override
        public Checkpoint run() {
            started.countDown();
            events.add("start " + id);
            try {
                release.await();
            } catch (InterruptedException e) {
                events.add("interrupted " + id);
                throw new KosaException(KosaException.Kind.VM, "checkpoint " + id + " failed: the sandbox was removed",
                        "");
            }
            if (failure != null) {
                events.add("failed " + id);
                throw new KosaException(KosaException.Kind.VM, "checkpoint " + id + " failed: " + failure, "");
            }
            events.add("committed " + id);
            return new Checkpoint(id, Instant.parse("2026-11-30T08:15:12Z"), "", 1, 2, 0, 0, null, null, 3);
        }

        @Override
        public void cancel() {
            cancelled = true;
        }
    }

    @Test
    void aCommitRunsOnItsOwnThreadAndIsAwaitedByItsIdAlone() throws Exception {
        Commits commits = new Commits();
        List<String> events = new CopyOnWriteArrayList<>();
        Held first = new Held(FIRST, events);
        commits.start(first);
        assertThat(first.started.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(commits.pending()).contains(FIRST);
        assertThat(commits.await(SECOND)).as("not the one under way").isEmpty();
        CompletableFuture<Checkpoint> waiting = CompletableFuture.supplyAsync(() -> commits.await(FIRST).orElseThrow());
        Thread.sleep(100);
        assertThat(waiting).as("waits while it commits").isNotDone();
        first.release.countDown();
        assertThat(waiting.get(10, TimeUnit.SECONDS).id()).isEqualTo(FIRST);
        assertThat(commits.pending()).isEmpty();
        assertThat(commits.await(FIRST)).as("still its result once done").isPresent();
    }

    @Test
    void aSecondCommitWaitsForTheFirstSoTheyEndInOrder() throws Exception {
        Commits commits = new Commits();
        List<String> events = new CopyOnWriteArrayList<>();
        Held first = new Held(FIRST, events);
        Held second = new Held(SECOND, events);
        commits.start(first);
        assertThatThrownBy(() -> commits.start(second)).as("one at a time").isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(FIRST);
        CompletableFuture<Void> next = CompletableFuture.runAsync(() -> {
            commits.awaitIdle();
            commits.start(second);
        });
        Thread.sleep(100);
        assertThat(next).isNotDone();
        first.release.countDown();
        next.get(10, TimeUnit.SECONDS);
        second.release.countDown();
        assertThat(commits.await(SECOND)).isPresent();
        assertThat(events).containsExactly("start " + FIRST, "committed " + FIRST, "start " + SECOND,
                "committed " + SECOND);
    }

    @Test
    void aFailedCommitIsThrownToWhoWaitsForItAndNotToWhoWaitsForQuiet() throws Exception {
        Commits commits = new Commits();
        Held first = new Held(FIRST, new CopyOnWriteArrayList<>());
        first.failure = "No space left on device";
        commits.start(first);
        first.release.countDown();
        commits.awaitIdle();
        assertThatThrownBy(() -> commits.await(FIRST)).isInstanceOf(KosaException.class)
                .hasMessageContaining("No space left on device");
    }

    @Test
    void cancellingStopsTheCommitAndReturnsOnceItsThreadHasEnded() throws Exception {
        Commits commits = new Commits();
        List<String> events = new CopyOnWriteArrayList<>();
        Held first = new Held(FIRST, events);
        commits.start(first);
        assertThat(first.started.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(commits.cancel(Duration.ofSeconds(10))).isTrue();
        assertThat(first.cancelled).isTrue();
        assertThat(events).containsExactly("start " + FIRST, "interrupted " + FIRST);
        assertThat(commits.pending()).isEmpty();
        assertThat(commits.cancel(Duration.ofSeconds(1))).as("nothing left to cancel").isTrue();
        assertThat(commits.awaitIdle(Duration.ofSeconds(1))).isTrue();
    }

    @Test
    void waitingForTheDaemonsExitIsBounded() throws Exception {
        Commits commits = new Commits();
        Held first = new Held(FIRST, new CopyOnWriteArrayList<>());
        commits.start(first);
        assertThat(commits.awaitIdle(Duration.ofMillis(100))).isFalse();
        first.release.countDown();
        assertThat(commits.awaitIdle(Duration.ofSeconds(10))).isTrue();
    }
}
