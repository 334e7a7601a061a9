package dev.kosa8.agent;

import dev.kosa8.protocol.Message;

/**
 * The agent's part of a checkpoint and a rewind ({@link Message.Freeze},
 * {@link Message.Thaw}): freeze the sandbox's processes and sync before the
 * host stops the machine; after it runs again, correct the clock, reseed the
 * kernel's random generator and thaw. Each answers on its channel with
 * Exited(0) or Failed and registers no channel: a freeze on the one thread
 * kept for it (it waits for the kernel), a thaw at once on the reader's (three
 * quick system calls; after a restore, a new thread's first steps cost the
 * guest page faults the host answers one by one).
 *
 * <p>The freeze's thread lives as long as the agent. A thread started per
 * freeze ended right after its answer, and the host stops the machine as
 * soon as it has that answer: every checkpoint caught the thread in the
 * middle of its exit, and every restore of it finished that exit first (the
 * JVM's and the kernel's thread teardown, its stack unmapped, the other CPU
 * told to flush its TLB), all of it code run for the first time in a fresh
 * QEMU. bench/history/undo.md, run 15 ("what a wake translates"), counts
 * that work.
 */
final class Checkpointing {
    private Checkpointing() {
    }

    /**
     * Freezes the sandbox's processes and syncs, then brings a cached folder's mount level with the host: its
     * module sends the messages it holds (quiet walks, opens and clunks) before the Tsync, so the host's fid
     * table at the instant has every one of them; held past the instant, one the host read before the pause
     * but served after it would be missing from the checkpoint's table, and a fid the restored guest uses answer
     * EBADF (docs/workspace.md, "Quiet messages are held in the guest").
     */
    static Channel freeze(Message.Freeze f, Outbox outbox) {
        answer(f.channel(), outbox, "freeze", () -> {
            SandboxCgroup.freeze(f.timeoutMillis());
            WorkspaceMount.syncCached();
        });
        return null;
    }

    static Channel thaw(Message.Thaw t, Outbox outbox) {
        answerNow(t.channel(), outbox, "thaw", () -> {
            // the clock and the random generator first: no sandbox process may run with the checkpoint's
            if (t.epochMillis() > 0) {
                ClockAndEntropy.setClock(t.epochMillis());
            }
            byte[] seed = t.seed();
            if (seed.length > 0) {
                ClockAndEntropy.reseed(seed);
            }
            SandboxCgroup.thaw();
        });
        return null;
    }

    private interface Step {
        void run() throws Exception;
    }

    /** Runs freezes one at a time, in order: the host sends one and waits for its answer before the next. */
    private static final java.util.concurrent.ExecutorService FREEZER =
            java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "checkpoint-freeze");
                t.setDaemon(true);
                return t;
            });

    private static void answer(int channel, Outbox outbox, String what, Step step) {
        FREEZER.execute(() -> answerNow(channel, outbox, what, step));
    }

    private static void answerNow(int channel, Outbox outbox, String what, Step step) {
        try {
            step.run();
            outbox.send(new Message.Exited(channel, 0, 0));
        } catch (Exception | Error e) {
            Log.info(what + " failed: " + e.getMessage());
            outbox.send(new Message.Failed(channel, Message.ErrorCode.INTERNAL, what + ": " + e.getMessage()));
        }
    }
}
