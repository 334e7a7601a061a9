package dev.kosa8.vm;

import java.io.IOException;
import java.util.BitSet;
import java.util.List;

/**
 * A saved machine whose RAM can be sent page by page, in any order, so that
 * QEMU can run it before all of its RAM has arrived ({@link Postcopy}). A
 * machine kept as pages ({@code dev.kosa8.checkpoint.ram}) is one; a machine
 * kept as one stream file is not, and loads whole.
 */
public interface PagedMachine extends SavedMachine {
    /**
     * Opens what the pages are read from (the pack files), checking what can
     * be checked before QEMU is told anything: a damaged image or a missing
     * pack fails here, while the machine can still be loaded another way or
     * not at all.
     */
    Pages openPages() throws IOException;

    /**
     * The parts of a migration stream, and its pages one by one. Pages are
     * numbered across blocks: {@link #index} of block {@code b}'s page
     * {@code p}. Used by one thread at a time.
     */
    interface Pages extends AutoCloseable {
        /** The stream's header and configuration: everything before RAM's setup section. */
        byte[] header();

        /** RAM's setup section (the blocks and their sizes), with its footer. */
        byte[] setup();

        /** The devices' sections, as QEMU loads them after RAM, without the end mark or the description after it. */
        byte[] devices();

        /** RAM's section id, which its setup section declared. */
        int sectionId();

        /** Whether sections end with footers. */
        boolean footers();

        List<String> blocks();

        /** The pages of block {@code block}. */
        long blockPages(int block);

        int index(int block, long page);

        /** The block page {@code index} is in. */
        int blockOf(int index);

        /**
         * The pages an earlier load of this store was asked for, in the order
         * asked, to send first; empty when none was kept. Every one is a valid
         * index.
         */
        int[] hotPages();

        /** Keeps {@code pages} for {@link #hotPages} of the next load. */
        void rememberHot(int[] pages) throws IOException;

        /**
         * Writes page {@code page} of {@code block} as one record; it names
         * its block unless {@code continues} (the record before it in this
         * section was of the same block). A page not in the stream goes as
         * zeros: a new QEMU's RAM.
         */
        void writePage(int block, long page, boolean continues, StreamOutput out) throws IOException;

        /**
         * Writes the next pages in the order they are best read (runs of a
         * pack file, each in one piece), at most {@code max}, skipping
         * pages set in {@code sent} and setting those it writes. The first
         * record names its block; the pages written are all of one block.
         *
         * @return the number written; 0 when every present page is in {@code sent}
         */
        int sweep(BitSet sent, int max, StreamOutput out) throws IOException;

        @Override
        void close() throws IOException;
    }
}
