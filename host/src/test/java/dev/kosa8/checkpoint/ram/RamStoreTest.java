package dev.kosa8.checkpoint.ram;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RamStoreTest {
    private static final int RAM_PAGES = 400;

    @TempDir
    Path dir;

    private Path write(String id, byte[] stream) throws IOException {
        return write(dir, id, stream);
    }

    /** Checkpoint {@code id}'s stream as QEMU leaves it, in another store's directory. */
    private static Path write(Path in, String id, byte[] stream) throws IOException {
        Files.createDirectories(in);
        return Files.write(in.resolve(id + ".vmstate"), stream);
    }

    private byte[] assembled(RamStore store, String id) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        store.open(id).writeTo(Channels.newChannel(out));
        return out.toByteArray();
    }

    private List<String> files() throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            return all.filter(Files::isRegularFile).map(p -> dir.relativize(p).toString()).sorted().toList();
        }
    }

    @Test
    void aStreamTakenApartIsPutTogetherWithEveryPageAndItsTail() throws Exception {
        List<Streams.Page> pages = Streams.machine(RAM_PAGES, 1);
        byte[] tail = Streams.tail(1);
        byte[] stream = Streams.stream(pages, RAM_PAGES, tail);
        RamStore store = new RamStore(dir);

        long added = store.store("c1", write("c1", stream), null);

        long stored = pages.stream().filter(p -> p.bytes() != null).count();
        assertThat(files()).containsExactly("c1.ram", "ram/c1.pages");
        assertThat(Files.size(dir.resolve("ram/c1.pages"))).isEqualTo(stored * RamStore.RECORD);
        assertThat(added).isEqualTo(Files.size(dir.resolve("ram/c1.pages")) + Files.size(dir.resolve("c1.ram")));
        byte[] back = assembled(store, "c1");
        assertThat(Streams.content(back)).isEqualTo(Streams.content(pages, tail));
        assertThat(Streams.content(back)).isEqualTo(Streams.content(stream));
        assertThat(back).as("the same prefix: header, configuration, RAM's setup")
                .startsWith(java.util.Arrays.copyOf(stream, 100));
    }

    /** The heart of it: a checkpoint costs the pages that changed since the one the machine came from. */
    @Test
    void anArm64MachinesStreamWithItsPageSizeInTheConfigurationIsTakenApartToo() throws Exception {
        List<Streams.Page> pages = Streams.machine(RAM_PAGES, 7);
        byte[] tail = Streams.tail(7);
        byte[] stream = Streams.stream(pages, RAM_PAGES, tail, true);
        RamStore store = new RamStore(dir);
        store.store("c1", write("c1", stream), null);
        byte[] back = assembled(store, "c1");
        assertThat(Streams.content(back)).isEqualTo(Streams.content(pages, tail));
        assertThat(back).as("the configuration's subsection kept in the prefix").startsWith(
                java.util.Arrays.copyOf(stream, 100));
        // another page size, or another subsection, is a stream not taken apart: kept whole by the caller
        for (byte[] odd : List.of(replace(stream, new byte[] {0, 0, 0, 12}, new byte[] {0, 0, 0, 16}),
                replace(stream, "target-page-bits".getBytes(StandardCharsets.US_ASCII),
                        "target-page-bitz".getBytes(StandardCharsets.US_ASCII)))) {
            assertThatThrownBy(() -> new RamStore(dir).store("c2", write("c2", odd), null))
                    .isInstanceOf(RamStream.UnknownFormat.class);
        }
    }

    /** {@code stream} with the first occurrence of {@code from} replaced by {@code to} (of the same length). */
    private static byte[] replace(byte[] stream, byte[] from, byte[] to) {
        byte[] out = stream.clone();
        for (int i = 0; i + from.length <= out.length; i++) {
            if (java.util.Arrays.equals(out, i, i + from.length, from, 0, from.length)) {
                System.arraycopy(to, 0, out, i, to.length);
                return out;
            }
        }
        throw new AssertionError("not found");
    }

    @Test
    void aLaterCheckpointStoresOnlyThePagesThatChanged() throws Exception {
        List<Streams.Page> first = Streams.machine(RAM_PAGES, 2);
        RamStore store = new RamStore(dir);
        store.store("c1", write("c1", Streams.stream(first, RAM_PAGES, Streams.tail(2))), null);

        Random r = new Random(3);
        List<Streams.Page> second = new ArrayList<>();
        int changed = 0;
        int zeroed = 0;
        for (Streams.Page p : first) {
            if (p.bytes() != null && p.index() % 50 == 7) {
                second.add(new Streams.Page(p.block(), p.index(), Streams.random(r)));
                changed++;
            } else if (p.bytes() != null && p.index() % 50 == 9) {
                second.add(new Streams.Page(p.block(), p.index(), null));
                zeroed++;
            } else {
                second.add(p);
            }
        }
        java.util.Collections.shuffle(second, r); // another order: pages are matched by place, not position
        assertThat(changed).isPositive();
        byte[] tail = Streams.tail(4);
        long added = store.store("c2", write("c2", Streams.stream(second, RAM_PAGES, tail)), "c1");

        assertThat(Files.size(dir.resolve("ram/c2.pages"))).isEqualTo((long) changed * RamStore.RECORD);
        assertThat(added).isEqualTo((long) changed * RamStore.RECORD + Files.size(dir.resolve("c2.ram")));
        assertThat(Streams.content(assembled(store, "c2"))).isEqualTo(Streams.content(second, tail));
        assertThat(Streams.content(assembled(store, "c1"))).as("the first is untouched")
                .isEqualTo(Streams.content(first, Streams.tail(2)));
        var only = store.bytesOnlyIn();
        assertThat(only.get("c2")).isEqualTo(added);
        assertThat(only.get("c1")).as("c1's pages that c2 changed or zeroed are its alone")
                .isEqualTo((long) (changed + zeroed) * RamStore.RECORD + Files.size(dir.resolve("c1.ram")));
    }

    @Test
    void aPackStaysWhileAnImageUsesItAndGoesWithTheLast() throws Exception {
        List<Streams.Page> pages = Streams.machine(RAM_PAGES, 5);
        RamStore store = new RamStore(dir);
        store.store("c1", write("c1", Streams.stream(pages, RAM_PAGES, Streams.tail(5))), null);
        long c2 = store.store("c2", write("c2", Streams.stream(pages, RAM_PAGES, Streams.tail(6))), "c1");
        assertThat(files()).containsExactly("c1.ram", "c2.ram", "ram/c1.pages");
        assertThat(c2).as("nothing changed: only an image").isEqualTo(Files.size(dir.resolve("c2.ram")));

        store.retainOnly(Set.of("c2"));
        assertThat(files()).as("c1's pack holds c2's pages").containsExactly("c2.ram", "ram/c1.pages");
        assertThat(Streams.content(assembled(store, "c2"))).isEqualTo(Streams.content(pages, Streams.tail(6)));

        Files.writeString(dir.resolve("c3.ram.tmp"), "left by a daemon that died");
        Files.writeString(dir.resolve("ram/c3.pages.tmp"), "left by a daemon that died");
        Files.writeString(dir.resolve(".tmp-c4.ram-0123456789abcdef"), "left by a daemon that died");
        Files.writeString(dir.resolve("ram/.tmp-c4.pages-0123456789abcdef"), "left by a daemon that died");
        store.retainOnly(Set.of());
        assertThat(files()).isEmpty();
    }

    /** A booted template's pages, linked into a new sandbox's store, are its first checkpoint's base. */
    @Test
    void aTemplatesPagesAdoptedByAnotherStoreAreItsFirstCheckpointsBaseAtNoCostInSpace() throws Exception {
        Path templateDir = Files.createDirectories(dir.resolve("template"));
        Path sandboxDir = dir.resolve("sandbox/checkpoints");
        List<Streams.Page> booted = Streams.machine(RAM_PAGES, 20);
        RamStore template = new RamStore(templateDir);
        template.store("template-x", write(templateDir, "template-x", Streams.stream(booted, RAM_PAGES,
                Streams.tail(20))), null);
        RamStore sandbox = new RamStore(sandboxDir);
        assertThat(sandbox.adopt(new RamStore(dir.resolve("no-template")), "template-x", true)).isFalse();

        assertThat(sandbox.adopt(template, "template-x", true)).isTrue();
        assertThat(Files.isSameFile(sandboxDir.resolve("ram/template-x.pages"), templateDir.resolve("ram/template-x.pages")))
                .as("a link, not a copy").isTrue();
        assertThat(Files.getAttribute(templateDir.resolve("template-x.ram"), "unix:nlink")).isEqualTo(2);
        assertThat(sandbox.adopt(template, "template-x", true)).as("again, over the links it left").isTrue();

        Random r = new Random(21);
        List<Streams.Page> later = new ArrayList<>();
        int changed = 0;
        for (Streams.Page p : booted) {
            boolean change = p.bytes() != null && p.index() % 10 == 3;
            later.add(change ? new Streams.Page(p.block(), p.index(), Streams.random(r)) : p);
            changed += change ? 1 : 0;
        }
        byte[] tail = Streams.tail(22);
        long added = sandbox.store("c1", write(sandboxDir, "c1", Streams.stream(later, RAM_PAGES, tail)), "template-x");
        assertThat(Files.size(sandboxDir.resolve("ram/c1.pages"))).isEqualTo((long) changed * RamStore.RECORD);
        assertThat(added).isEqualTo((long) changed * RamStore.RECORD + Files.size(sandboxDir.resolve("c1.ram")));

        // once the checkpoint is the base, the template's image goes from the sandbox's store; its pack stays while
        // the checkpoint uses it, and the template's own files are never touched
        sandbox.retainOnly(Set.of("c1"));
        assertThat(Files.exists(sandboxDir.resolve("template-x.ram"))).isFalse();
        assertThat(Files.exists(sandboxDir.resolve("ram/template-x.pages"))).isTrue();
        assertThat(Streams.content(assembled(sandbox, "c1"))).isEqualTo(Streams.content(later, tail));
        sandbox.retainOnly(Set.of());
        assertThat(Files.exists(sandboxDir.resolve("ram/template-x.pages"))).isFalse();
        assertThat(Files.getAttribute(templateDir.resolve("ram/template-x.pages"), "unix:nlink")).isEqualTo(1);
        assertThat(Streams.content(assembled(template, "template-x")))
                .isEqualTo(Streams.content(booted, Streams.tail(20)));
    }

    /** A fork starts from a checkpoint whose image uses several packs: all come along, and outlive the parent. */
    @Test
    void aForkAdoptsEveryPackItsCheckpointUsesAndKeepsThemWhenTheParentDeletesItsOwn() throws Exception {
        Path parentDir = Files.createDirectories(dir.resolve("parent"));
        Path forkDir = dir.resolve("fork");
        List<Streams.Page> first = Streams.machine(RAM_PAGES, 30);
        RamStore parent = new RamStore(parentDir);
        parent.store("c1", write(parentDir, "c1", Streams.stream(first, RAM_PAGES, Streams.tail(30))), null);
        Random r = new Random(31);
        List<Streams.Page> second = new ArrayList<>();
        for (Streams.Page p : first) {
            second.add(p.bytes() != null && p.index() % 4 == 1 ? new Streams.Page(p.block(), p.index(), Streams.random(r))
                    : p);
        }
        parent.store("c2", write(parentDir, "c2", Streams.stream(second, RAM_PAGES, Streams.tail(31))), "c1");

        RamStore fork = new RamStore(forkDir);
        assertThat(fork.adopt(parent, "c2", false)).isTrue();
        try (Stream<Path> packs = Files.list(forkDir.resolve("ram"))) {
            assertThat(packs.map(p -> p.getFileName().toString()).sorted()).containsExactly("c1.pages", "c2.pages");
        }
        long added = fork.store("f1", write(forkDir, "f1", Streams.stream(second, RAM_PAGES, Streams.tail(32))), "c2");
        assertThat(added).as("nothing changed since the fork: an image alone").isEqualTo(Files.size(forkDir.resolve("f1.ram")));

        parent.retainOnly(Set.of()); // the parent removed: its names go, the fork's links stay
        assertThat(Files.exists(parentDir.resolve("ram/c1.pages"))).isFalse();
        fork.retainOnly(Set.of("f1"));
        assertThat(Streams.content(assembled(fork, "f1"))).isEqualTo(Streams.content(second, Streams.tail(32)));
    }

    @Test
    void anImageThatCannotBeReadIsNotAdopted() throws Exception {
        Path otherDir = Files.createDirectories(dir.resolve("other"));
        RamStore other = new RamStore(otherDir);
        other.store("c1", write(otherDir, "c1", Streams.stream(Streams.machine(RAM_PAGES, 40), RAM_PAGES,
                Streams.tail(40))), null);
        Files.write(otherDir.resolve("c1.ram"), new byte[] {1, 2, 3});
        Path mine = dir.resolve("mine");

        assertThatThrownBy(() -> new RamStore(mine).adopt(other, "c1", true)).isInstanceOf(IOException.class);
        assertThat(Files.exists(mine.resolve("c1.ram"))).isFalse();
    }

    @Test
    void whileAKeptImageCannotBeReadNoPackIsDeleted() throws Exception {
        List<Streams.Page> pages = Streams.machine(RAM_PAGES, 10);
        RamStore store = new RamStore(dir);
        store.store("c1", write("c1", Streams.stream(pages, RAM_PAGES, Streams.tail(10))), null);
        store.store("c2", write("c2", Streams.stream(Streams.machine(RAM_PAGES, 11), RAM_PAGES, Streams.tail(11))),
                null);
        Files.write(dir.resolve("c2.ram"), new byte[] {1, 2, 3}); // damaged: which packs it uses is unknown
        store.retainOnly(Set.of("c2"));
        assertThat(files()).containsExactly("c2.ram", "ram/c1.pages", "ram/c2.pages");
        assertThat(store.bytesOnlyIn()).containsEntry("c2", 3L + Files.size(dir.resolve("ram/c2.pages")));
    }

    @Test
    void aBaseWithOtherBlocksSharesNothing() throws Exception {
        List<Streams.Page> pages = Streams.machine(RAM_PAGES, 9);
        RamStore store = new RamStore(dir);
        store.store("c1", write("c1", Streams.stream(pages, RAM_PAGES, Streams.tail(9))), null);
        // the same pages in a machine with more memory: page indices may mean other pages there
        store.store("c2", write("c2", Streams.stream(pages, RAM_PAGES + 8, Streams.tail(9))), "c1");
        assertThat(Files.size(dir.resolve("ram/c2.pages"))).isEqualTo(Files.size(dir.resolve("ram/c1.pages")));
        assertThat(Streams.content(assembled(store, "c2"))).isEqualTo(Streams.content(pages, Streams.tail(9)));
    }

    @Test
    void aStreamItCannotTakeApartIsLeftWholeAndNothingElseIsWritten() throws Exception {
        byte[] stream = Streams.stream(Streams.machine(RAM_PAGES, 7), RAM_PAGES, Streams.tail(7));
        // the first page's flags become a compressed page's (0x100), which this does not read
        int first = indexOfFirstPage(stream);
        stream[first + 6] |= 0x01;
        Path raw = write("c1", stream);
        RamStore store = new RamStore(dir);

        assertThatThrownBy(() -> store.store("c1", raw, null)).isInstanceOf(RamStream.UnknownFormat.class)
                .hasMessageContaining("page flags 0x1");
        assertThat(files()).containsExactly("c1.vmstate");
        assertThat(store.has("c1")).isFalse();
    }

    @Test
    void aDamagedOrCutImageIsRefusedNeverHalfUsed() throws Exception {
        List<Streams.Page> pages = Streams.machine(RAM_PAGES, 8);
        RamStore store = new RamStore(dir);
        store.store("c1", write("c1", Streams.stream(pages, RAM_PAGES, Streams.tail(8))), null);
        Path image = dir.resolve("c1.ram");
        byte[] good = Files.readAllBytes(image);

        byte[] flipped = good.clone();
        flipped[good.length / 2] ^= 0x10;
        Files.write(image, flipped);
        assertThatThrownBy(() -> assembled(store, "c1")).isInstanceOf(IOException.class).hasMessageContaining("damaged");

        Files.write(image, java.util.Arrays.copyOf(good, good.length - 100));
        assertThatThrownBy(() -> assembled(store, "c1")).isInstanceOf(IOException.class);

        Files.write(image, good);
        Path pack = dir.resolve("ram/c1.pages");
        try (var ch = java.nio.channels.FileChannel.open(pack, java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(ch.size() / 2);
        }
        assertThatThrownBy(() -> assembled(store, "c1")).isInstanceOf(IOException.class)
                .hasMessageContaining("shorter than its image says");

        store.store("c2", write("c2", Streams.stream(pages, RAM_PAGES, Streams.tail(8))), null);
        try (var ch = java.nio.channels.FileChannel.open(dir.resolve("ram/c2.pages"),
                java.nio.file.StandardOpenOption.WRITE)) {
            // the first record's header: a pack that does not match its image (damaged, or another's) is refused
            ch.write(java.nio.ByteBuffer.wrap(new byte[] {1}), 5);
        }
        assertThatThrownBy(() -> assembled(store, "c2")).isInstanceOf(IOException.class)
                .hasMessageContaining("does not hold the page its image names at slot 0");
    }

    /** Where the first page's 8-byte header starts: right after RAM's setup section and the part's header. */
    static int indexOfFirstPage(byte[] stream) throws IOException {
        RamStream.Layout[] setup = new RamStream.Layout[1];
        RamStream.read(java.lang.foreign.MemorySegment.ofArray(stream), new RamStream.Pages() {
            @Override
            public void blocks(RamStream.Layout s) {
                setup[0] = s;
            }

            @Override
            public void page(int block, long page, java.lang.foreign.MemorySegment data) {
            }

            @Override
            public void zero(int block, long page, int fill) {
            }
        });
        return setup[0].prefix().length + 5;
    }

    /**
     * A page file gone (deleted by hand, a disk that lost it): the checkpoint that needs it fails with an error
     * naming the file, and the checkpoint that does not need it reads back whole. The same for an image file.
     */
    @Test
    void aMissingPageOrImageFileIsNamedAndTheOtherCheckpointsStayUsable() throws Exception {
        List<Streams.Page> first = Streams.machine(RAM_PAGES, 5);
        RamStore store = new RamStore(dir);
        store.store("c1", write("c1", Streams.stream(first, RAM_PAGES, Streams.tail(1))), null);
        List<Streams.Page> second = new ArrayList<>();
        Random r = new Random(6);
        for (Streams.Page p : first) {
            second.add(p.bytes() != null && p.index() % 10 == 3 ? new Streams.Page(p.block(), p.index(),
                    Streams.random(r)) : p);
        }
        store.store("c2", write("c2", Streams.stream(second, RAM_PAGES, Streams.tail(2))), "c1");
        var c1 = Streams.content(assembled(store, "c1"));

        Path pack = dir.resolve("ram/c2.pages");
        Files.delete(pack);
        assertThatThrownBy(() -> assembled(store, "c2")).isInstanceOf(IOException.class)
                .hasMessageContaining(pack.toString());
        assertThatThrownBy(() -> store.open("c2").openPages()).isInstanceOf(IOException.class)
                .hasMessageContaining(pack.toString());
        assertThat(Streams.content(assembled(store, "c1"))).as("c1 needs none of c2's pages").isEqualTo(c1);

        Path image = dir.resolve("c1.ram");
        Files.delete(image);
        assertThatThrownBy(() -> assembled(store, "c1")).isInstanceOf(IOException.class)
                .hasMessageContaining(image.toString());
    }
}
