package dev.kosa8.vm;

import java.io.IOException;

/**
 * What a restore waits for before QEMU takes the machine's disks into use.
 *
 * <p>A QEMU started to load a saved machine ({@code -incoming}) opens its
 * disk images inactive: it reads nothing more of them, caches nothing and
 * locks nothing until the machine is about to run, and then reads them
 * afresh (QEMU 7.2: {@code bdrv_activate_all} when the postcopy stream's run
 * command is handled, or at the end of a whole load). So a rewind puts the
 * root disk back ({@code qemu-img snapshot -a}) while the stream's start goes
 * out to a QEMU already running, and only the part of the stream that runs
 * the machine waits for it. A QEMU started after this opens the images
 * itself, so it is started only once they are whole.
 */
@FunctionalInterface
public interface DisksReady {
    /** Nothing to wait for: the disks are as the machine needs them. */
    DisksReady NOW = () -> { };

    /** Returns once the disks may be taken into use; throws if they cannot be (the restore fails). */
    void await() throws IOException;
}
