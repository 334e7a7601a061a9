package dev.kosa8.checkpoint;

import dev.kosa8.host.KosaException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The commit under way of one sandbox's checkpoints ({@link Commit}), on a
 * thread of its own. One at a time, in the order they were taken: QEMU
 * writes one machine state at a time, and a checkpoint's pages are compared
 * with the one before it, so a checkpoint taken while the one before still
 * commits waits for that commit first ({@link #awaitIdle}), as does anything
 * else that needs the machine's stream, its files or its QEMU (a rewind, a
 * removal, a pause to disk).
 */
final class Commits {
    /** What commits one checkpoint ({@link Commit}). */
    interface Job {
        /** The checkpoint's id. */
        String id();

        /** Commits it; returns it committed, or throws having recorded it failed. */
        Checkpoint run();

        /** Its sandbox goes away: it is to stop, leaving nothing and recording nothing. */
        void cancel();
    }

    /** A commit under way: its job, its result, and the thread running it. */
    private record Live(Job commit, CompletableFuture<Checkpoint> done, Thread thread) {
    }

    private Live live;

    /** Starts committing {@code commit} on a thread of its own; the caller has waited for the one before. */
    synchronized void start(Job commit) {
        if (live != null && !live.done().isDone()) {
            throw new IllegalStateException("checkpoint " + live.commit().id() + " is still being committed");
        }
        CompletableFuture<Checkpoint> done = new CompletableFuture<>();
        Thread t = Thread.ofPlatform().daemon().name("kosa8-commit-" + commit.id()).unstarted(() -> {
            try {
                done.complete(commit.run());
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        });
        live = new Live(commit, done, t);
        t.start();
    }

    private synchronized Live live() {
        return live;
    }

    /** The id of the checkpoint being committed, if one is. */
    Optional<String> pending() {
        Live l = live();
        return l == null || l.done().isDone() ? Optional.empty() : Optional.of(l.commit().id());
    }

    /**
     * Waits for the commit under way, if any, to end, committed or failed
     * (a failure is recorded in its checkpoint, not thrown here).
     */
    void awaitIdle() {
        Live l = live();
        if (l != null) {
            try {
                l.done().get();
            } catch (ExecutionException e) {
                // recorded as the checkpoint's failure
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new KosaException(KosaException.Kind.INTERNAL, "interrupted while checkpoint "
                        + l.commit().id() + " was being committed", "");
            }
        }
    }

    /**
     * Waits for checkpoint {@code id}'s commit when it is the one under way;
     * empty when it is not (it ended before, in this daemon or another).
     *
     * @throws KosaException the commit's failure
     */
    Optional<Checkpoint> await(String id) {
        Live l = live();
        if (l == null || !l.commit().id().equals(id)) {
            return Optional.empty();
        }
        try {
            return Optional.of(l.done().get());
        } catch (ExecutionException e) {
            if (e.getCause() instanceof KosaException k) {
                throw k;
            }
            throw new KosaException(KosaException.Kind.INTERNAL, "checkpoint " + id + " failed: " + e.getCause(),
                    "see the daemon's log", e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KosaException(KosaException.Kind.INTERNAL, "interrupted while checkpoint " + id
                    + " was being committed", "");
        }
    }

    /**
     * The sandbox goes away (its machine already killed): the commit under
     * way stops, writes no record, and this returns once its thread has
     * ended, having removed its parts, or after {@code timeout}.
     *
     * @return false when the commit's thread had not ended by then
     */
    boolean cancel(Duration timeout) {
        Live l = live();
        if (l == null || l.done().isDone()) {
            return true;
        }
        l.commit().cancel();
        l.thread().interrupt(); // out of its waits: the machine is gone
        try {
            l.done().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            // cancelled: its failure is the expected end
        } catch (TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        try {
            l.thread().join(timeout.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !l.thread().isAlive();
    }

    /**
     * Waits for the commit under way, up to {@code timeout} (the daemon is
     * going away); false when it had not ended by then.
     */
    boolean awaitIdle(Duration timeout) {
        Live l = live();
        if (l == null) {
            return true;
        }
        try {
            l.done().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (ExecutionException e) {
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
