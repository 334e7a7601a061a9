package dev.kosa8.checkpoint.ram;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.vm.PagedMachine;
import dev.kosa8.vm.Postcopy;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A lazy load ({@link Postcopy}) of a checkpoint kept as pages ({@link PageSender}), against a stand-in for the
 * loading QEMU that reads the stream as QEMU 7.2 does and asks for pages as a guest would touch them: the
 * commands come in the order QEMU needs (one discard before listen: see {@code Postcopy#sendSetup}), the package
 * holds the devices without the end mark and description, every page of the checkpoint arrives exactly once with
 * its content, asked-for pages included, and the stream ends with RAM's end section and the end mark. The real
 * QEMU is in {@code CheckpointIT}; this pins the stream down where a mistake would only show as a hung guest.
 */
class PostcopyTest {
    private static final int RAM_PAGES = 300;
    @TempDir
    Path dir;

    /** Device sections, then the end mark and a JSON description, as QEMU ends a stream. */
    private static byte[] tail(byte[] devices) {
        byte[] json = "{\"page_size\": 4096, \"devices\": []}".getBytes(StandardCharsets.US_ASCII);
        return ByteBuffer.allocate(devices.length + 1 + 5 + json.length).put(devices).put((byte) 0)
                .put((byte) 0x06).putInt(json.length).put(json).array();
    }

    @Test
    void everyPageArrivesOnceWithItsContentAskedForPagesIncluded() throws Exception {
        List<Streams.Page> pages = Streams.machine(RAM_PAGES, 5);
        byte[] devices = Streams.tail(5);
        byte[] stream = Streams.stream(pages, RAM_PAGES, tail(devices));
        RamStore store = new RamStore(dir.resolve("ckpt"));
        Files.createDirectories(dir.resolve("ckpt"));
        store.store("c1", Files.write(dir.resolve("ckpt/c1.vmstate"), stream), null);
        PagedMachine machine = store.open("c1");

        // pages a guest touches first: asked for once the devices are in, some of them zero pages
        // (none within the 15 pages read ahead after one asked before it)
        List<Long> wanted = List.of(299L, 7L, 150L, 100L, 0L);
        List<String> log = new ArrayList<>();
        FakeQemu.Result r = load(machine, stream, wanted, log);

        assertThat(r.devices()).as("the package holds the devices as saved, without end mark or description")
                .isEqualTo(devices);
        Map<String, byte[]> expected = new HashMap<>();
        for (Streams.Page p : pages) {
            expected.put(p.block() + "@" + p.index(), p.bytes() == null ? new byte[RamStream.PAGE] : p.bytes());
        }
        assertThat(r.pages().keySet()).isEqualTo(expected.keySet());
        for (var e : expected.entrySet()) {
            assertThat(r.pages().get(e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
        }
        assertThat(r.duplicates()).as("pages sent twice").isEmpty();
        assertThat(log).anyMatch(l -> l.contains("loaded lazily")).noneMatch(l -> l.equals("QEMU ended"));

        // the next load from the same store sends what this one was asked for first, before anyone asks
        FakeQemu.Result next = load(store.open("c1"), stream, List.of(), log);
        List<String> asked = wanted.stream().map(w -> Streams.RAM + "@" + w).toList();
        assertThat(next.order().subList(0, asked.size())).as("the first pages of the next load, before anyone asks")
                .containsExactlyElementsOf(asked);
        assertThat(next.pages().keySet()).isEqualTo(expected.keySet());
        assertThat(next.duplicates()).isEmpty();
    }

    /**
     * Only what the guest asked for while the restore's own steps ran is kept for the next load: what it asks
     * for after them is its work, which does not delay a restore and, sent first by every later load, only
     * slowed their wakes.
     */
    @Test
    void pagesAskedForAfterTheRestoresStepsAreNotSentFirstByTheNextLoad() throws Exception {
        int ramPages = 2000;
        List<Streams.Page> pages = Streams.machine(ramPages, 11);
        byte[] stream = Streams.stream(pages, ramPages, tail(Streams.tail(11)));
        // the last page the sweep would send: RAM's last repeated one (stored pages go first)
        long late = pages.stream().filter(p -> p.block().equals(Streams.RAM) && p.bytes() == null)
                .mapToLong(Streams.Page::index).max().orElseThrow();
        List<Long> wanted = List.of(7L, 1500L, 300L);
        assertThat(wanted).allMatch(w -> late < w || late > w + 15); // not read ahead after one of them
        // the sweep, once started, can still send the late page before the daemon's reader takes the request
        // (5 MB through a socket in a millisecond or two); such a load shows nothing, so it is made again
        List<String> log = new ArrayList<>();
        for (int attempt = 0; attempt < 5; attempt++) {
            Path ckpt = Files.createDirectories(dir.resolve("ckpt" + attempt));
            RamStore store = new RamStore(ckpt);
            store.store("c1", Files.write(ckpt.resolve("c1.vmstate"), stream), null);
            log.clear();

            load(store.open("c1"), stream, wanted, List.of(late), log);

            if (log.stream().anyMatch(l -> l.contains(" 4 as the guest asked for them (3 of them before"))) {
                try (PagedMachine.Pages next = store.open("c1").openPages()) {
                    assertThat(next.hotPages()).as("the wake's pages, without the one asked for after it")
                            .containsExactly(7, 1500, 300);
                }
                return;
            }
        }
        throw new AssertionError("in five loads the late page never went out as asked for: " + log);
    }

    @Test
    void pagesOpenedEarlyLoadTheSameAndADamagedImageFailsTheLoadThatTakesThem() throws Exception {
        List<Streams.Page> pages = Streams.machine(RAM_PAGES, 9);
        byte[] stream = Streams.stream(pages, RAM_PAGES, tail(Streams.tail(9)));
        Path ckpt = Files.createDirectories(dir.resolve("ckpt"));
        RamStore store = new RamStore(ckpt);
        store.store("c1", Files.write(ckpt.resolve("c1.vmstate"), stream), null);
        List<String> log = new ArrayList<>();
        FakeQemu.Result whole = load(store.open("c1"), stream, List.of(42L), log);
        try (dev.kosa8.vm.EarlyPages early = dev.kosa8.vm.EarlyPages.opening(store.open("c1"))) {
            FakeQemu.Result r = load(early, stream, List.of(42L), log);
            assertThat(r.pages().keySet()).isEqualTo(whole.pages().keySet());
            for (var e : whole.pages().entrySet()) {
                assertThat(r.pages().get(e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
            }
            try (PagedMachine.Pages again = early.openPages()) {
                assertThat(again.blocks()).as("a second open opens afresh").isNotEmpty();
            }
        }

        Path image = ckpt.resolve("c1.ram");
        byte[] bytes = Files.readAllBytes(image);
        bytes[bytes.length / 2] ^= 1;
        Files.write(image, bytes);
        try (dev.kosa8.vm.EarlyPages early = dev.kosa8.vm.EarlyPages.opening(store.open("c1"))) {
            assertThatThrownBy(early::openPages).isInstanceOf(IOException.class).hasMessageContaining("damaged");
        }
    }

    /** A sandbox's lazy loads start from its template's list of pages to send first, and add to it. */
    @Test
    void aStoreAdoptedFromATemplateSharesItsListOfPagesToSendFirst() throws Exception {
        Path templateDir = dir.resolve("template");
        Path sandboxDir = dir.resolve("sandbox/checkpoints");
        RamStore template = storeWithHotPages(templateDir, "template-x", 5, 6);
        RamStore sandbox = new RamStore(sandboxDir);
        assertThat(sandbox.adopt(template, "template-x", true)).isTrue();

        try (PagedMachine.Pages pages = sandbox.open("template-x").openPages()) {
            assertThat(pages.hotPages()).as("the template's, before the sandbox learned any").containsExactly(5, 6);
            pages.rememberHot(new int[] {5, 6, 9});
            assertThat(pages.hotPages()).containsExactly(5, 6, 9);
        }
        try (PagedMachine.Pages pages = template.open("template-x").openPages()) {
            assertThat(pages.hotPages()).as("what the sandbox's load asked for, in the template's list")
                    .containsExactly(5, 6, 9);
        }
        assertThat(Files.readString(sandboxDir.resolve(RamStore.HOT_POOL)))
                .isEqualTo(templateDir.resolve(RamStore.HOT_PAGES).toAbsolutePath().toString());
    }

    /** A fork's store starts from a copy of its parent's list, and never writes into the parent's directory. */
    @Test
    void aForksStoreCopiesItsParentsListOfPagesToSendFirstAndLeavesTheParentsAlone() throws Exception {
        Path forkDir = dir.resolve("fork/checkpoints");
        RamStore parent = storeWithHotPages(dir.resolve("parent"), "c1", 4, 2);
        RamStore fork = new RamStore(forkDir);
        assertThat(fork.adopt(parent, "c1", false)).isTrue();

        try (PagedMachine.Pages pages = fork.open("c1").openPages()) {
            assertThat(pages.hotPages()).as("a copy of the parent's").containsExactly(4, 2);
            pages.rememberHot(new int[] {4, 2, 11});
        }
        try (PagedMachine.Pages pages = parent.open("c1").openPages()) {
            assertThat(pages.hotPages()).as("the parent's own, untouched").containsExactly(4, 2);
        }
        assertThat(forkDir.resolve(RamStore.HOT_POOL)).doesNotExist();
    }

    /** A store in {@code in} keeping machine {@code id} (20 pages) as pages, with {@code hot} as its list. */
    private static RamStore storeWithHotPages(Path in, String id, int... hot) throws IOException {
        RamStore store = new RamStore(Files.createDirectories(in));
        store.store(id, Files.write(in.resolve(id + ".vmstate"),
                Streams.stream(Streams.machine(20, 30), 20, tail(Streams.tail(30)))), null);
        try (PagedMachine.Pages pages = store.open(id).openPages()) {
            pages.rememberHot(hot);
        }
        return store;
    }

    @Test
    void aHotPagesFileThatIsCutOrNamesAPageTheImageLacksIsIgnored() throws Exception {
        byte[] stream = Streams.stream(Streams.machine(20, 7), 20, tail(Streams.tail(7)));
        Path ckpt = Files.createDirectories(dir.resolve("ckpt"));
        RamStore store = new RamStore(ckpt);
        store.store("c1", Files.write(ckpt.resolve("c1.vmstate"), stream), null);
        Path hot = ckpt.resolve(RamStore.HOT_PAGES);
        try (PagedMachine.Pages pages = store.open("c1").openPages()) {
            assertThat(pages.hotPages()).as("none kept yet").isEmpty();
            pages.rememberHot(new int[] {3, 20, 1});
            assertThat(pages.hotPages()).containsExactly(3, 20, 1);
            Files.write(hot, Arrays.copyOf(Files.readAllBytes(hot), 9)); // cut
            assertThat(pages.hotPages()).isEmpty();
            pages.rememberHot(new int[] {3, 21}); // the image has pages 0-20 (RAM and the ROM page)
            assertThat(pages.hotPages()).isEmpty();
            Files.write(hot, new byte[] {0x7f, 0, 0, 0});
            assertThat(pages.hotPages()).isEmpty();
        }
    }

    /** One lazy load of {@code machine} into a stand-in QEMU that asks for {@code wanted} once the devices are in. */
    private FakeQemu.Result load(PagedMachine machine, byte[] stream, List<Long> wanted, List<String> log)
            throws Exception {
        return load(machine, stream, wanted, List.of(), log);
    }

    /**
     * As {@link #load(PagedMachine, byte[], List, List)}, and then, once the restore's steps are done (its
     * {@code sweep}), the stand-in asks for {@code late} too, as a guest's work does after its wake.
     */
    private FakeQemu.Result load(PagedMachine machine, byte[] stream, List<Long> wanted, List<Long> late,
                                 List<String> log) throws Exception {
        Path socket = dir.resolve("incoming.sock");
        Files.deleteIfExists(socket);
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            java.util.concurrent.CountDownLatch gotWanted = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch restored = new java.util.concurrent.CountDownLatch(1);
            CompletableFuture<FakeQemu.Result> qemu = CompletableFuture.supplyAsync(() -> {
                try (SocketChannel ch = server.accept()) {
                    return new FakeQemu(ch, Arrays.copyOf(stream, RamStream.setupOffset(stream)), gotWanted)
                            .run(wanted, late, restored);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
            channel.connect(UnixDomainSocketAddress.of(socket));
            Postcopy.Loading loading = Postcopy.stream(channel, machine.openPages(), "c1", Duration.ofSeconds(20),
                    () -> log.add("QEMU ended"), log::add, () -> false);
            // until the restore lets the sweep start, pages come only as asked for (or remembered as asked for)
            assertThat(gotWanted.await(20, TimeUnit.SECONDS)).as("the pages asked for came").isTrue();
            loading.sweep();
            restored.countDown();
            loading.await(Duration.ofSeconds(20));
            assertThat(loading.isDone()).isTrue();
            return qemu.get(20, TimeUnit.SECONDS);
        }
    }

    @Test
    void aQemuThatNeverAnswersThePingIsRefusedSoTheStateCanBeLoadedWhole() throws Exception {
        List<Streams.Page> pages = Streams.machine(20, 6);
        byte[] stream = Streams.stream(pages, 20, tail(Streams.tail(6)));
        RamStore store = new RamStore(dir.resolve("ckpt"));
        Files.createDirectories(dir.resolve("ckpt"));
        store.store("c1", Files.write(dir.resolve("ckpt/c1.vmstate"), stream), null);
        Path socket = dir.resolve("incoming.sock");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            CompletableFuture.runAsync(() -> {
                try (SocketChannel ch = server.accept()) {
                    ch.write(ByteBuffer.allocate(8).putShort((short) 1).putShort((short) 4).putInt(1).flip());
                    ByteBuffer drain = ByteBuffer.allocate(1 << 16); // what was sent meanwhile, until it is closed
                    while (ch.read(drain.clear()) >= 0) {
                        Thread.onSpinWait();
                    }
                } catch (IOException e) {
                    // the test only needs the failure it reports
                }
            });
            SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
            channel.connect(UnixDomainSocketAddress.of(socket));
            assertThatThrownBy(() -> Postcopy.stream(channel, store.open("c1").openPages(), "c1",
                    Duration.ofSeconds(20), () -> { }, m -> { }, () -> false))
                    .isInstanceOf(Postcopy.Refused.class).hasMessageContaining("load failed");
        }
    }

    /** Reads a postcopy stream as QEMU 7.2's destination does, and asks for pages on its return path. */
    private static final class FakeQemu {
        record Result(byte[] devices, Map<String, byte[]> pages, List<String> duplicates, List<String> order) {
        }

        private final SocketChannel ch;
        private final DataInputStream in;
        private final byte[] header;
        private final Map<String, byte[]> pages = new HashMap<>();
        private final List<String> duplicates = new ArrayList<>();
        private final List<String> order = new ArrayList<>();
        private final List<String> blocks = new ArrayList<>();

        private final java.util.concurrent.CountDownLatch gotWanted;

        FakeQemu(SocketChannel ch, byte[] header, java.util.concurrent.CountDownLatch gotWanted) {
            this.gotWanted = gotWanted;
            this.ch = ch;
            this.in = new DataInputStream(Channels.newInputStream(ch));
            this.header = header;
        }

        /**
         * Asks for {@code wanted} once the devices are in; then, when all of them came, stops reading until
         * {@code restored}, and asks for {@code late}.
         */
        Result run(List<Long> wanted, List<Long> late, java.util.concurrent.CountDownLatch restored)
                throws IOException {
            byte[] h = new byte[header.length];
            in.readFully(h);
            assertThat(h).as("header and configuration as saved").isEqualTo(header);
            command(1, 0);
            assertThat(command(3, 16)).isEqualTo(ByteBuffer.allocate(16).putLong(4096).putLong(4096).array());
            assertThat(in.readUnsignedByte()).as("RAM's setup section").isEqualTo(0x01);
            int id = in.readInt();
            in.readFully(new byte[in.readUnsignedByte() + 8]); // "ram", instance, version
            long left = in.readLong() & ~0xfffL;
            while (left > 0) {
                byte[] name = new byte[in.readUnsignedByte()];
                in.readFully(name);
                blocks.add(new String(name, StandardCharsets.ISO_8859_1));
                left -= in.readLong();
            }
            assertThat(in.readLong()).isEqualTo(RamStream.EOS);
            footer(id);
            byte[] discard = command(6, -1);
            assertThat(discard[0]).as("discard version").isZero();
            byte[] pkg = command(7, 4);
            byte[] body = new byte[ByteBuffer.wrap(pkg).getInt()];
            in.readFully(body);
            assertThat(Arrays.copyOf(body, 5)).as("listen first").isEqualTo(new byte[] {8, 0, 4, 0, 0});
            byte[] end = Arrays.copyOfRange(body, body.length - 14, body.length);
            assertThat(end).as("ping 1, then run").isEqualTo(new byte[] {8, 0, 2, 0, 4, 0, 0, 0, 1, 8, 0, 5, 0, 0});
            byte[] devices = Arrays.copyOfRange(body, 5, body.length - 14);
            send(2, ByteBuffer.allocate(4).putInt(1).array()); // pong: the devices are in
            ask(wanted);
            boolean askedLate = late.isEmpty();
            String last = null;
            while (true) {
                int kind = in.readUnsignedByte();
                if (kind == 0x00) {
                    break; // the end mark
                }
                assertThat(kind).as("a section of RAM").isIn(0x02, 0x03);
                assertThat(in.readInt()).isEqualTo(id);
                while (true) {
                    long word = in.readLong();
                    int flags = (int) (word & 0xfff);
                    if (flags == RamStream.EOS) {
                        break;
                    }
                    if ((flags & RamStream.CONTINUE) == 0) {
                        byte[] name = new byte[in.readUnsignedByte()];
                        in.readFully(name);
                        last = new String(name, StandardCharsets.ISO_8859_1);
                    }
                    assertThat(last).as("a record continuing no block").isNotNull();
                    byte[] page = new byte[RamStream.PAGE];
                    if ((flags & ~RamStream.CONTINUE) == RamStream.ZERO) {
                        Arrays.fill(page, (byte) in.readUnsignedByte());
                    } else {
                        assertThat(flags & ~RamStream.CONTINUE).isEqualTo(RamStream.PAGE_DATA);
                        in.readFully(page);
                    }
                    String key = last + "@" + (word >>> 12);
                    order.add(key);
                    if (pages.put(key, page) != null) {
                        duplicates.add(key);
                    }
                    if (wanted.stream().allMatch(w -> pages.containsKey(blocks.getFirst() + "@" + w))) {
                        gotWanted.countDown();
                        if (!askedLate) {
                            await(restored);
                            ask(late);
                            askedLate = true;
                            pause(); // the daemon's reader takes the request while the sweep waits for this
                        }
                    }
                }
                footer(id);
                if (kind == 0x03) {
                    assertThat(in.readUnsignedByte()).as("the end mark after RAM's end").isZero();
                    break;
                }
            }
            send(1, ByteBuffer.allocate(4).putInt(0).array()); // shut: loaded
            return new Result(devices, pages, duplicates, order);
        }

        /** Asks for {@code pages} of the first block, as a guest touching them would: the first names its block. */
        private void ask(List<Long> pages) throws IOException {
            boolean named = false;
            for (long p : pages) {
                if (p < 0) {
                    continue;
                }
                ByteBuffer req = ByteBuffer.allocate(named ? 12 : 13 + blocks.getFirst().length())
                        .putLong(p * RamStream.PAGE).putInt(RamStream.PAGE);
                if (!named) {
                    req.put((byte) blocks.getFirst().length()).put(blocks.getFirst().getBytes(StandardCharsets.ISO_8859_1));
                }
                send(named ? 4 : 3, req.array());
                named = true;
            }
        }

        private static void pause() throws IOException {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        }

        private static void await(java.util.concurrent.CountDownLatch latch) throws IOException {
            try {
                if (!latch.await(20, TimeUnit.SECONDS)) {
                    throw new IOException("the restore's steps did not end");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        }

        private byte[] command(int cmd, int length) throws IOException {
            assertThat(in.readUnsignedByte()).as("a command").isEqualTo(0x08);
            assertThat(in.readUnsignedShort()).as("command").isEqualTo(cmd);
            int len = in.readUnsignedShort();
            if (length >= 0) {
                assertThat(len).isEqualTo(length);
            }
            byte[] b = new byte[len];
            in.readFully(b);
            return b;
        }

        private void footer(int id) throws IOException {
            assertThat(in.readUnsignedByte()).isEqualTo(0x7e);
            assertThat(in.readInt()).isEqualTo(id);
        }

        private void send(int type, byte[] payload) throws IOException {
            ByteBuffer b = ByteBuffer.allocate(4 + payload.length).putShort((short) type)
                    .putShort((short) payload.length).put(payload).flip();
            while (b.hasRemaining()) {
                ch.write(b);
            }
        }
    }
}
