package dev.kosa8.checkpoint.ram;

import dev.kosa8.vm.PagedMachine;
import dev.kosa8.vm.StreamOutput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.function.Function;

/**
 * A checkpoint's pages for a load that sends them as QEMU needs them
 * ({@link dev.kosa8.vm.Postcopy}): any one page on request, and the rest in
 * the order {@link RamStore} sends a whole stream (block by block, each
 * pack's records in the order the pack holds them, so that a run goes out
 * in one piece by {@code sendfile}; then the block's repeated-byte pages).
 *
 * <p>The packs are opened, and every record the order uses checked against
 * the page its image names (a damaged pack is refused here, before QEMU is
 * told anything), when this is made; a pack deleted afterwards (the
 * checkpoint removed meanwhile) stays readable through its open channel.
 */
final class PageSender implements PagedMachine.Pages {
    private final RamImage image;
    private final FileChannel[] packs;
    private final byte[][] blockNames;
    private final byte[] header;
    private final byte[] setup;
    private final byte[] devices;
    /** Why the devices cannot be had apart from the stream's end, or null. */
    private final RamStream.UnknownFormat noDevices;
    /** Every present page, in the order the sweep sends them. */
    private final int[] order;
    private final HotPages hot;
    private int cursor;

    private PageSender(RamImage image, FileChannel[] packs, byte[] header, byte[] setup, byte[] devices,
                       RamStream.UnknownFormat noDevices, int[] order, HotPages hot) {
        this.image = image;
        this.hot = hot;
        this.packs = packs;
        this.header = header;
        this.setup = setup;
        this.devices = devices;
        this.noDevices = noDevices;
        this.order = order;
        this.blockNames = image.layout.blocks().stream()
                .map(b -> b.name().getBytes(StandardCharsets.ISO_8859_1)).toArray(byte[][]::new);
    }

    /**
     * @param hot where the pages a load was asked for are kept for the
     *            next load from the same store ({@link #hotPages})
     */
    static PageSender open(RamImage image, Function<String, Path> packFile, HotPages hot) throws IOException {
        byte[] prefix = image.layout.prefix();
        int setupAt = RamStream.setupOffset(prefix);
        byte[] devices = null;
        RamStream.UnknownFormat noDevices = null;
        try {
            devices = RamStream.devicesOf(image.tail);
        } catch (RamStream.UnknownFormat e) {
            noDevices = e; // a whole stream needs only the tail as it is; a lazy load is refused (forLazyLoad)
        }
        FileChannel[] packs = new FileChannel[image.packs.size()];
        try {
            int[][] pageAt = new int[packs.length][];
            for (int p = 0; p < packs.length; p++) {
                packs[p] = FileChannel.open(packFile.apply(image.packs.get(p)), StandardOpenOption.READ);
                pageAt[p] = new int[(int) (packs[p].size() / RamStore.RECORD)];
                Arrays.fill(pageAt[p], -1);
            }
            for (int i = 0; i < image.pages(); i++) {
                if (image.kind[i] == RamImage.STORED) {
                    if (image.slot[i] >= pageAt[image.ref[i]].length) {
                        throw new IOException("the RAM pack " + image.packs.get(image.ref[i])
                                + " is shorter than its image says: it was damaged");
                    }
                    pageAt[image.ref[i]][image.slot[i]] = i;
                }
            }
            int[] order = new int[image.pages()];
            int n = 0;
            ByteBuffer probe = ByteBuffer.allocate(8);
            List<RamStream.Block> blocks = image.layout.blocks();
            for (int b = 0; b < blocks.size(); b++) {
                int first = image.index(b, 0);
                int end = first + (int) blocks.get(b).pages();
                for (int p = 0; p < packs.length; p++) {
                    int[] at = pageAt[p];
                    int slot = 0;
                    while (slot < at.length) {
                        if (at[slot] < first || at[slot] >= end) {
                            slot++;
                            continue;
                        }
                        int runEnd = slot;
                        while (runEnd < at.length && at[runEnd] >= first && at[runEnd] < end) {
                            order[n++] = at[runEnd++];
                        }
                        // a pack that does not hold the pages its image names is refused, not loaded: each run's
                        // ends are checked
                        check(packs[p], probe, slot, (long) (at[slot] - first) * RamStream.PAGE, image.packs.get(p));
                        check(packs[p], probe, runEnd - 1, (long) (at[runEnd - 1] - first) * RamStream.PAGE,
                                image.packs.get(p));
                        slot = runEnd;
                    }
                }
                for (int i = first; i < end; i++) {
                    if (image.kind[i] == RamImage.REPEATED) {
                        order[n++] = i;
                    }
                }
            }
            return new PageSender(image, packs, Arrays.copyOf(prefix, setupAt),
                    Arrays.copyOfRange(prefix, setupAt, prefix.length), devices, noDevices, Arrays.copyOf(order, n),
                    hot);
        } catch (IOException | RuntimeException e) {
            closeAll(packs);
            throw e;
        }
    }

    /** Checks that the record in {@code slot} is the page the image says it is. */
    private static void check(FileChannel pack, ByteBuffer probe, int slot, long offset, String name)
            throws IOException {
        probe.clear();
        while (probe.hasRemaining()) {
            if (pack.read(probe, (long) slot * RamStore.RECORD + probe.position()) < 0) {
                break;
            }
        }
        if (probe.hasRemaining() || probe.getLong(0) != (offset | RamStream.PAGE_DATA | RamStream.CONTINUE)) {
            throw new IOException("the RAM pack " + name + " does not hold the page its image names at slot " + slot
                    + ": it was damaged");
        }
    }

    @Override
    public byte[] header() {
        return header.clone();
    }

    @Override
    public byte[] setup() {
        return setup.clone();
    }

    /** This, once it is known that a lazy load can have the devices apart from the end of the stream. */
    PageSender forLazyLoad() throws IOException {
        if (noDevices != null) {
            close();
            throw noDevices;
        }
        return this;
    }

    @Override
    public byte[] devices() {
        return devices.clone();
    }

    @Override
    public int sectionId() {
        return image.layout.sectionId();
    }

    @Override
    public boolean footers() {
        return image.layout.footers();
    }

    @Override
    public List<String> blocks() {
        List<String> names = new ArrayList<>();
        for (RamStream.Block b : image.layout.blocks()) {
            names.add(b.name());
        }
        return names;
    }

    @Override
    public long blockPages(int block) {
        return image.layout.blocks().get(block).pages();
    }

    @Override
    public int index(int block, long page) {
        if (page < 0 || page >= blockPages(block)) {
            throw new IndexOutOfBoundsException("page " + page + " of block " + block);
        }
        return image.index(block, page);
    }

    @Override
    public void writePage(int block, long page, boolean continues, StreamOutput out) throws IOException {
        int i = index(block, page);
        long place = page * RamStream.PAGE;
        if (image.kind[i] == RamImage.STORED) {
            named(out, block, place | RamStream.PAGE_DATA, continues, 0);
            out.region(packs[image.ref[i]], (long) image.slot[i] * RamStore.RECORD + 8, RamStream.PAGE);
        } else {
            // a page of one repeated byte, or one the stream did not have: a new QEMU's RAM is zeros
            named(out, block, place | RamStream.ZERO, continues, 1)
                    .put((byte) (image.kind[i] == RamImage.REPEATED ? image.ref[i] : 0));
        }
    }

    @Override
    public int sweep(BitSet sent, int max, StreamOutput out) throws IOException {
        while (cursor < order.length && sent.get(order[cursor])) {
            cursor++;
        }
        if (cursor == order.length || max <= 0) {
            return 0;
        }
        int first = order[cursor];
        int block = blockOf(first);
        int written = 0;
        boolean continues = false;
        while (cursor < order.length && written < max) {
            int i = order[cursor];
            if (sent.get(i)) {
                cursor++;
                continue;
            }
            if (blockOf(i) != block) {
                break;
            }
            if (image.kind[i] == RamImage.STORED && continues) {
                // a run of records of one pack, in slot order and none sent yet, goes out in one piece
                int end = cursor + 1;
                while (end < order.length && written + (end - cursor) < max && !sent.get(order[end])
                        && image.kind[order[end]] == RamImage.STORED && image.ref[order[end]] == image.ref[i]
                        && image.slot[order[end]] == image.slot[order[end - 1]] + 1 && blockOf(order[end]) == block) {
                    end++;
                }
                out.region(packs[image.ref[i]], (long) image.slot[i] * RamStore.RECORD,
                        (long) (end - cursor) * RamStore.RECORD);
                for (int k = cursor; k < end; k++) {
                    sent.set(order[k]);
                }
                written += end - cursor;
                cursor = end;
                continue;
            }
            writePage(block, i - image.firstPage[block], continues, out);
            sent.set(i);
            continues = true;
            written++;
            cursor++;
        }
        return written;
    }

    /** {@link HotPages#read}: this store's list, else the pool's. */
    @Override
    public int[] hotPages() {
        return hot.read(image.pages());
    }

    @Override
    public void rememberHot(int[] pages) throws IOException {
        hot.remember(pages);
    }

    @Override
    public int blockOf(int index) {
        int b = image.firstPage.length - 1;
        while (image.firstPage[b] > index) {
            b--;
        }
        return b;
    }

    private ByteBuffer named(StreamOutput out, int block, long word, boolean continues, int extra)
            throws IOException {
        byte[] name = blockNames[block];
        ByteBuffer h = out.header(8 + 1 + name.length + extra);
        if (continues) {
            h.putLong(word | RamStream.CONTINUE);
        } else {
            h.putLong(word).put((byte) name.length).put(name);
        }
        return h;
    }

    @Override
    public void close() throws IOException {
        closeAll(packs);
    }

    private static void closeAll(FileChannel[] channels) throws IOException {
        IOException first = null;
        for (FileChannel ch : channels) {
            if (ch != null) {
                try {
                    ch.close();
                } catch (IOException e) {
                    first = first == null ? e : first;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
