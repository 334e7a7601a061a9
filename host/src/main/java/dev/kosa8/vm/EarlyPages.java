package dev.kosa8.vm;

import java.io.IOException;
import java.nio.channels.WritableByteChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A machine kept as pages whose pages are being opened, from the moment it
 * was made, on a thread of its own: for a restore that knows its state well
 * before it can send it. A rewind first stops the machine, ends its QEMU and
 * puts the disk back; opening the pages of a 1 GiB guest (its image read,
 * checked and indexed, every run of the packs checked) took 37-88 ms on the
 * rewind's path after those steps (bench/history/undo.md, run 10), and now runs
 * beside them.
 *
 * <p>The first {@link #openPages} gets those pages (or the failure opening
 * them met); any later one opens afresh. {@link #close} closes them when
 * nothing took them.
 */
public final class EarlyPages implements PagedMachine, AutoCloseable {
    private final PagedMachine machine;
    private final CompletableFuture<Pages> opening = new CompletableFuture<>();
    private final AtomicBoolean taken = new AtomicBoolean();

    private EarlyPages(PagedMachine machine) {
        this.machine = machine;
        Thread.ofPlatform().daemon().name("kosa8-open-pages").start(() -> {
            try {
                opening.complete(machine.openPages());
            } catch (IOException | RuntimeException | Error e) {
                opening.completeExceptionally(e);
            }
        });
    }

    /**
     * {@code state} with its pages opening from now on, when a restore will
     * load it lazily ({@link Postcopy#supported}); otherwise {@code state}
     * itself, since nothing would use the pages.
     */
    public static SavedMachine of(SavedMachine state) {
        return state instanceof PagedMachine paged && Postcopy.supported() ? opening(paged) : state;
    }

    /** {@code machine} with its pages opening from now on. */
    public static EarlyPages opening(PagedMachine machine) {
        return new EarlyPages(machine);
    }

    @Override
    public Pages openPages() throws IOException {
        if (!taken.compareAndSet(false, true)) {
            return machine.openPages();
        }
        try {
            return opening.join();
        } catch (CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw new IOException(io.getMessage(), io); // thrown anew: this thread's trace, the opener's cause
            }
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw (Error) cause;
        }
    }

    @Override
    public void writeTo(WritableByteChannel out) throws IOException {
        machine.writeTo(out);
    }

    @Override
    public String name() {
        return machine.name();
    }

    /** Closes the pages once opened, if no restore took them. */
    @Override
    public void close() {
        if (taken.compareAndSet(false, true)) {
            opening.thenAccept(pages -> {
                try {
                    pages.close();
                } catch (IOException e) {
                    // read-only files: nothing was left unwritten
                }
            });
        }
    }
}
