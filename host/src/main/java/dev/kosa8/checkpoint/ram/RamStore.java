package dev.kosa8.checkpoint.ram;

import dev.kosa8.host.AtomicFile;
import dev.kosa8.vm.PagedMachine;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The RAM of a sandbox's checkpoints, page by page, so that a checkpoint
 * costs the pages that changed rather than all of the guest's memory.
 *
 * <p>QEMU writes a checkpoint's RAM as a migration stream holding every page
 * ({@code <id>.vmstate}). {@link #store} takes it apart ({@link RamStream}):
 * a page whose content (SHA-256) the base checkpoint, the one the machine
 * last came from, has at the same place stays where that one keeps it;
 * only the others are written, into this checkpoint's pack
 * ({@code ram/<id>.pages}); an image ({@code <id>.ram}, {@link RamImage})
 * says where each page is. {@link #open} puts the stream together again for
 * a rewind or a fork. A pack is deleted once no image uses it.
 *
 * <p>A pack holds each page as the stream does, behind its 8-byte header
 * (its place in its block, "a page", "same block as the last"): such a
 * record means the same in every stream, so a run of records a stream
 * needs goes to QEMU as one piece of the pack file, by {@code sendfile},
 * without a header written between every two pages.
 *
 * <p>Why pages at the same place, and not a store of pages by content: a
 * guest's memory changes in place (a page is rewritten, not moved), so a
 * page compared with its own earlier content catches nearly all sharing at
 * the cost of one image in memory, where an index of every page ever stored
 * grows with every checkpoint.
 */
public final class RamStore {
    private static final long TAIL_LIMIT = 64L << 20;
    /** A page in a pack: its stream header, then its bytes. */
    static final int RECORD = 8 + RamStream.PAGE;
    /**
     * The pages the last lazy load from this store was asked for, sent first
     * by the next ({@link PageSender#hotPages}): one file per store, since a
     * sandbox's checkpoints (and a template) keep its kernel and agent at the
     * same places.
     */
    static final String HOT_PAGES = "hot-pages";
    /** The path of the store's pool ({@link HotPages}): the list of the store it was adopted from. */
    static final String HOT_POOL = "hot-pages.pool";
    private final Path dir;
    private final Path packs;

    /** @param checkpointDir the sandbox's {@code checkpoints} directory */
    public RamStore(Path checkpointDir) {
        this.dir = checkpointDir;
        this.packs = checkpointDir.resolve("ram");
    }

    Path image(String id) {
        return dir.resolve(id + ".ram");
    }

    Path pack(String name) {
        return packs.resolve(name + ".pages");
    }

    /** Whether checkpoint {@code id}'s RAM is kept here (and not as a whole stream). */
    public boolean has(String id) {
        return Files.isRegularFile(image(id));
    }

    /**
     * Takes checkpoint {@code id}'s stream apart into pages, sharing those
     * unchanged since checkpoint {@code baseId} (null for none), and deletes
     * the stream once its image is durable.
     *
     * @return the bytes this checkpoint added: its new pages and its image
     * @throws IOException with nothing written when the stream is not one
     *                     {@link RamStream} takes apart (the caller keeps it whole) or the disk fails
     */
    public long store(String id, Path stream, String baseId) throws IOException {
        RamImage base = null;
        if (baseId != null && has(baseId)) {
            try {
                base = RamImage.read(image(baseId));
            } catch (IOException e) {
                base = null; // a damaged base shares nothing; this checkpoint stores every page
            }
        }
        Files.createDirectories(packs);
        // the pack made durable and named before the image that names it; each a temporary file until then
        try (Arena arena = Arena.ofConfined();
             FileChannel in = FileChannel.open(stream, StandardOpenOption.READ);
             AtomicFile.Pending packFile = AtomicFile.begin(pack(id))) {
            Packer packer = new Packer(id, base, packFile.channel());
            MemorySegment s = in.map(FileChannel.MapMode.READ_ONLY, 0, in.size(), arena);
            RamStream.Layout layout = RamStream.read(s, packer);
            long tailBytes = s.byteSize() - layout.tailOffset();
            if (tailBytes > TAIL_LIMIT) {
                throw new RamStream.UnknownFormat(tailBytes + " bytes after the RAM pages", layout.tailOffset());
            }
            packer.finish(layout, s.asSlice(layout.tailOffset()).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            long added = 0;
            if (packer.stored > 0) {
                packFile.commit();
                added += Files.size(pack(id));
            } // else no pack: closing the pending one deletes it
            AtomicFile.write(image(id), packer.image::writeTo);
            Files.delete(stream);
            return added + Files.size(image(id));
        } catch (IOException | RuntimeException e) {
            if (!has(id)) {
                Files.deleteIfExists(pack(id)); // moved in place, but no image names it
            }
            throw e;
        }
    }

    /**
     * Makes machine {@code id} kept as pages in {@code other} (a booted
     * template's store, or the checkpoint a fork starts from) a base here:
     * its image and every pack it uses are hard-linked in, so the first
     * checkpoint of a machine restored from it shares every page still as it
     * was, at no cost in space. Links, not references: deleting the other
     * store's files later leaves these whole. Does nothing when {@code other}
     * keeps no such image; replaces what an earlier call linked.
     *
     * @return whether the base is here now
     * @throws IOException with nothing linked when the image cannot be read or a link cannot be made (another
     *                     file system)
     * @param pool whether this store's list of pages to send first is pooled
     *             with {@code other}'s (a template, which outlives the
     *             sandboxes made from it) or starts as a copy of it (a fork's
     *             parent, which can be removed at any time: a load adding to
     *             its list while its directory is being deleted could leave a
     *             file behind and fail that removal)
     */
    public boolean adopt(RamStore other, String id, boolean pool) throws IOException {
        if (!other.has(id)) {
            return false;
        }
        List<String> used = RamImage.packsOf(other.image(id));
        Files.createDirectories(packs);
        List<Path> made = new ArrayList<>();
        try {
            for (String name : used) {
                if (!Files.exists(pack(name))) {
                    Files.createLink(pack(name), other.pack(name));
                    made.add(pack(name));
                }
            }
            Files.deleteIfExists(image(id));
            Files.createLink(image(id), other.image(id));
        } catch (IOException | UnsupportedOperationException e) {
            Files.deleteIfExists(image(id));
            for (Path p : made) {
                Files.deleteIfExists(p);
            }
            throw e instanceof IOException io ? io : new IOException(e.getMessage(), e);
        }
        syncDirectory(packs);
        syncDirectory(dir);
        if (pool) {
            poolWith(other);
        } else {
            copyHotFrom(other);
        }
        return true;
    }

    /** Starts this store's list as a copy of {@code other}'s, when it has none yet. */
    private void copyHotFrom(RamStore other) {
        Path theirs = other.dir.resolve(HOT_PAGES);
        if (!Files.exists(dir.resolve(HOT_PAGES)) && Files.isRegularFile(theirs)) {
            try {
                writeHint(HOT_PAGES, Files.readAllBytes(theirs));
            } catch (IOException e) {
                // a hint: the first loads ask for their pages one by one instead
            }
        }
    }

    /**
     * Makes {@code other}'s list of pages to send first this store's pool
     * ({@link HotPages}): its loads start from it and add to it.
     */
    private void poolWith(RamStore other) {
        writeHint(HOT_POOL, other.dir.resolve(HOT_PAGES).toAbsolutePath().toString()
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /**
     * Writes file {@code name} of this store whole (a temporary file moved in
     * place). A hint: one that cannot be written costs a first load its speed,
     * nothing else, so it is not an error.
     */
    private void writeHint(String name, byte[] content) {
        try {
            AtomicFile.writeHint(dir.resolve(name), content);
        } catch (IOException e) {
            // a hint: the first loads ask for their pages one by one instead
        }
    }

    /** This store's lists of pages to send first: its own, and its pool when it was adopted from another. */
    private HotPages hotPages() {
        Path pool = null;
        try {
            Path named = Path.of(Files.readString(dir.resolve(HOT_POOL)).strip());
            if (named.isAbsolute() && named.getFileName().toString().equals(HOT_PAGES)) {
                pool = named;
            }
        } catch (IOException | java.nio.file.InvalidPathException e) {
            // none, or unreadable: no pool
        }
        return new HotPages(dir.resolve(HOT_PAGES), pool);
    }

    /**
     * Checkpoint {@code id}'s machine: its stream put together from its image
     * and packs as QEMU loads it, or its pages one by one ({@link PageSender}).
     */
    public PagedMachine open(String id) {
        Path file = image(id);
        return new PagedMachine() {
            @Override
            public void writeTo(WritableByteChannel out) throws IOException {
                assemble(RamImage.read(file), out);
            }

            @Override
            public Pages openPages() throws IOException {
                return PageSender.open(RamImage.read(file), RamStore.this::pack, hotPages()).forLazyLoad();
            }

            @Override
            public String name() {
                return file.getFileName().toString();
            }
        };
    }

    /**
     * Deletes the images of checkpoints not in {@code keep} (and what an
     * unfinished {@link #store} left), then every pack no image left uses.
     * While an image that is kept cannot be read (damaged), no pack is
     * deleted: which ones it uses is not known.
     */
    public void retainOnly(Set<String> keep) throws IOException {
        if (!Files.isDirectory(dir)) {
            return;
        }
        Set<String> used = new HashSet<>();
        boolean unknown = false;
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if (name.endsWith(".ram.tmp") || AtomicFile.targetName(f).filter(t -> t.endsWith(".ram")).isPresent()) {
                    Files.deleteIfExists(f); // an image's temporary file (or an earlier kosa8's)
                } else if (name.endsWith(".ram")) {
                    String id = name.substring(0, name.length() - 4);
                    if (keep.contains(id)) {
                        try {
                            used.addAll(RamImage.packsOf(f));
                        } catch (IOException e) {
                            unknown = true;
                        }
                    } else {
                        Files.deleteIfExists(f);
                    }
                }
            }
        }
        if (!Files.isDirectory(packs)) {
            return;
        }
        try (var files = Files.list(packs)) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if (name.endsWith(".tmp") || AtomicFile.isTemporary(f) || (name.endsWith(".pages") && !unknown
                        && !used.contains(name.substring(0, name.length() - 6)))) {
                    Files.deleteIfExists(f);
                }
            }
        }
    }

    /**
     * For each checkpoint kept here, the bytes on disk that deleting it would
     * free: its image, and the pages of its pack that no other checkpoint's
     * image uses. Reads every image once; one that cannot be read counts
     * its file alone, and shares nothing.
     */
    public Map<String, Long> bytesOnlyIn() throws IOException {
        Map<String, Long> imageBytes = new HashMap<>();
        Map<String, boolean[]> shared = new HashMap<>();
        if (!Files.isDirectory(dir)) {
            return Map.of();
        }
        try (var files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.getFileName().toString().endsWith(".ram")).toList()) {
                String id = f.getFileName().toString().replaceFirst("\\.ram$", "");
                imageBytes.put(id, Files.size(f));
                RamImage image;
                try {
                    image = RamImage.read(f);
                } catch (IOException e) {
                    continue;
                }
                for (int p = 0; p < image.packs.size(); p++) {
                    String name = image.packs.get(p);
                    if (name.equals(id)) {
                        continue; // its own pages: shared only if another image uses them
                    }
                    boolean[] slots = shared.computeIfAbsent(name, this::slotsOf);
                    for (int i = 0; i < image.pages(); i++) {
                        if (image.kind[i] == RamImage.STORED && image.ref[i] == p && image.slot[i] < slots.length) {
                            slots[image.slot[i]] = true;
                        }
                    }
                }
            }
        }
        Map<String, Long> only = new HashMap<>();
        for (var e : imageBytes.entrySet()) {
            boolean[] slots = shared.computeIfAbsent(e.getKey(), this::slotsOf);
            long bytes = e.getValue();
            for (boolean s : slots) {
                bytes += s ? 0 : RECORD;
            }
            only.put(e.getKey(), bytes);
        }
        return only;
    }

    /** One flag per page slot of pack {@code name}; none for a pack that is not there. */
    private boolean[] slotsOf(String name) {
        try {
            return new boolean[(int) (Files.size(pack(name)) / RECORD)];
        } catch (IOException e) {
            return new boolean[0];
        }
    }

    /**
     * Writes the stream an image describes: its prefix, one section of every
     * page, its tail. The pages go in {@link PageSender}'s order (block by
     * block: its stored pages pack by pack, in the order the pack holds
     * them, each run of records the image uses sent in one piece from the
     * pack file by {@code sendfile}, as a whole stream file is: no copy in
     * the daemon, no page faults; then its repeated-byte pages, headers
     * only), the first record of each block naming it. Pages go to QEMU in
     * any order; each is sent once.
     */
    private void assemble(RamImage image, WritableByteChannel out) throws IOException {
        try (PageSender pages = PageSender.open(image, this::pack, hotPages())) {
            dev.kosa8.vm.StreamOutput o = new dev.kosa8.vm.StreamOutput(out);
            o.bytes(image.layout.prefix());
            o.header(5).put((byte) 0x02).putInt(image.layout.sectionId()); // a part of RAM's section
            java.util.BitSet sent = new java.util.BitSet(image.pages());
            while (pages.sweep(sent, Integer.MAX_VALUE, o) > 0) {
                // block by block
            }
            ByteBuffer tail = o.header(8 + 5).putLong(RamStream.EOS);
            if (image.layout.footers()) {
                tail.put((byte) 0x7e).putInt(image.layout.sectionId());
            }
            o.bytes(image.tail);
            o.flush();
        }
    }

    private static void syncDirectory(Path d) throws IOException {
        try (FileChannel ch = FileChannel.open(d, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            // some file systems cannot sync a directory; the renames are still atomic there
        }
    }

    /** Sorts a stream's pages into shared and new, writing the new ones to the pack. */
    private static final class Packer implements RamStream.Pages {
        private final String id;
        private final RamImage base;
        private final FileChannel pack;
        private final ByteBuffer pending = ByteBuffer.allocateDirect(256 * RECORD).order(ByteOrder.BIG_ENDIAN);
        private final MessageDigest sha;
        private final List<String> packNames = new ArrayList<>();
        private RamImage image;
        /** Whether the base's page indices mean the same pages: the same blocks, by name and length. */
        private boolean shareable;
        int stored;

        /** @param pack the pack's file, open to write; its owner makes it durable, names it and closes it */
        Packer(String id, RamImage base, FileChannel pack) {
            this.id = id;
            this.base = base;
            this.pack = pack;
            try {
                this.sha = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("every Java has SHA-256", e);
            }
        }

        @Override
        public void blocks(RamStream.Layout setup) {
            image = new RamImage(setup, new byte[0], packNames);
            shareable = base != null && base.layout.blocks().equals(setup.blocks());
        }

        @Override
        public void page(int block, long page, MemorySegment data) throws IOException {
            int i = image.index(block, page);
            sha.update(data.asByteBuffer());
            byte[] h = sha.digest();
            long high = ByteBuffer.wrap(h, 0, 8).getLong();
            long low = ByteBuffer.wrap(h, 8, 8).getLong();
            image.kind[i] = RamImage.STORED;
            image.hashHigh[i] = high;
            image.hashLow[i] = low;
            if (shareable && base.kind[i] == RamImage.STORED
                    && base.hashHigh[i] == high && base.hashLow[i] == low) {
                image.ref[i] = packIndex(base.packs.get(base.ref[i]));
                image.slot[i] = base.slot[i];
                return;
            }
            image.ref[i] = packIndex(id);
            image.slot[i] = stored++;
            if (pending.remaining() < RECORD) {
                drain();
            }
            pending.putLong(page * RamStream.PAGE | RamStream.PAGE_DATA | RamStream.CONTINUE);
            pending.put(data.asByteBuffer());
        }

        @Override
        public void zero(int block, long page, int fill) {
            int i = image.index(block, page);
            image.kind[i] = RamImage.REPEATED;
            image.ref[i] = fill;
        }

        private int packIndex(String name) {
            int at = packNames.indexOf(name);
            if (at < 0) {
                packNames.add(name);
                at = packNames.size() - 1;
            }
            return at;
        }

        /** Writes the last pages; the image gets the stream's tail. */
        void finish(RamStream.Layout whole, byte[] tail) throws IOException {
            drain();
            image = image.withTail(whole, tail);
        }

        private void drain() throws IOException {
            pending.flip();
            while (pending.hasRemaining()) {
                pack.write(pending);
            }
            pending.clear();
        }
    }
}
