package dev.kosa8.checkpoint.ram;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Migration streams laid out as QEMU 7.2 writes them (see {@link RamStream}), small enough for unit tests: a
 * main RAM block and a one-page ROM, pages in a scrambled order over two RAM sections, some of them zero, the
 * second section an END as a stopped machine's migration ends, then a tail of device bytes.
 */
final class Streams {
    static final String RAM = "microvm.ram";
    static final String ROM = "/rom@etc/acpi/rsdp";

    /** A page's content in a stream: its bytes, or null for a zero page. */
    record Page(String block, long index, byte[] bytes) {
    }

    private Streams() {
    }

    /** {@code pages} pages of RAM plus the ROM page, in a random order; about a third are zero. */
    static List<Page> machine(int pages, long seed) {
        Random r = new Random(seed);
        List<Page> all = new ArrayList<>();
        for (int i = 0; i < pages; i++) {
            all.add(new Page(RAM, i, r.nextInt(3) == 0 ? null : random(r)));
        }
        all.add(new Page(ROM, 0, random(r)));
        java.util.Collections.shuffle(all, r);
        return all;
    }

    static byte[] random(Random r) {
        byte[] b = new byte[RamStream.PAGE];
        r.nextBytes(b);
        return b;
    }

    /** The stream of {@code pages} over a RAM block of {@code ramPages}, with the given device bytes after. */
    static byte[] stream(List<Page> pages, int ramPages, byte[] tail) {
        return stream(pages, ramPages, tail, false);
    }

    /**
     * As above; {@code virt}: the configuration of QEMU's arm64 {@code virt} machine, which names the target's
     * page size in a subsection (as in a stream QEMU 7.2 wrote here for an arm64 guest).
     */
    static byte[] stream(List<Page> pages, int ramPages, byte[] tail, boolean virt) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeInt(0x5145564d);
            out.writeInt(3);
            out.writeByte(0x07);
            String machine = virt ? "virt-7.2" : "microvm";
            out.writeInt(machine.length());
            out.write(machine.getBytes(StandardCharsets.US_ASCII));
            if (virt) {
                out.writeByte(0x05);
                name(out, "configuration/target-page-bits");
                out.writeInt(1);
                out.writeInt(12);
            }
            out.writeByte(0x01); // START of section 2, "ram", instance 0, version 4
            out.writeInt(2);
            name(out, "ram");
            out.writeInt(0);
            out.writeInt(4);
            long ram = (long) ramPages * RamStream.PAGE;
            out.writeLong((ram + RamStream.PAGE) | RamStream.MEM_SIZE);
            name(out, RAM);
            out.writeLong(ram);
            name(out, ROM);
            out.writeLong(RamStream.PAGE);
            out.writeLong(RamStream.EOS);
            footer(out);
            String last = null;
            int half = pages.size() / 2;
            for (int part = 0; part < 2; part++) {
                out.writeByte(part == 0 ? 0x02 : 0x03);
                out.writeInt(2);
                for (Page p : part == 0 ? pages.subList(0, half) : pages.subList(half, pages.size())) {
                    boolean cont = p.block().equals(last); // as QEMU, across sections too
                    int flags = (p.bytes() == null ? RamStream.ZERO : RamStream.PAGE_DATA)
                            | (cont ? RamStream.CONTINUE : 0);
                    out.writeLong(p.index() * RamStream.PAGE | flags);
                    if (!cont) {
                        name(out, p.block());
                        last = p.block();
                    }
                    if (p.bytes() == null) {
                        out.writeByte(0);
                    } else {
                        out.write(p.bytes());
                    }
                }
                out.writeLong(RamStream.EOS);
                footer(out);
            }
            out.write(tail);
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Device sections as far as this test cares: opaque bytes that begin as QEMU's do. */
    static byte[] tail(long seed) {
        byte[] t = new byte[3000];
        new Random(seed).nextBytes(t);
        t[0] = 0x04;
        return t;
    }

    private static void name(DataOutputStream out, String name) throws IOException {
        out.writeByte(name.length());
        out.write(name.getBytes(StandardCharsets.ISO_8859_1));
    }

    private static void footer(DataOutputStream out) throws IOException {
        out.writeByte(0x7e);
        out.writeInt(2);
    }

    /** What a stream holds: every page by block and index (null for zero), and its tail. */
    record Content(Map<String, byte[]> pages, byte[] tail) {
        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Content c) || !Arrays.equals(tail, c.tail) || !pages.keySet().equals(c.pages.keySet())) {
                return false;
            }
            return pages.entrySet().stream().allMatch(e -> Arrays.equals(e.getValue(), c.pages.get(e.getKey())));
        }

        @Override
        public int hashCode() {
            return pages.keySet().hashCode();
        }

        @Override
        public String toString() {
            return pages.size() + " pages, tail of " + tail.length + " bytes";
        }
    }

    static Content content(byte[] stream) throws IOException {
        Map<String, byte[]> pages = new LinkedHashMap<>();
        MemorySegment s = MemorySegment.ofArray(stream);
        List<RamStream.Block> blocks = new ArrayList<>();
        RamStream.Layout layout = RamStream.read(s, new RamStream.Pages() {
            @Override
            public void blocks(RamStream.Layout setup) {
                blocks.addAll(setup.blocks());
            }

            @Override
            public void page(int block, long page, MemorySegment data) {
                pages.put(blocks.get(block).name() + "@" + page, data.toArray(ValueLayout.JAVA_BYTE));
            }

            @Override
            public void zero(int block, long page, int fill) {
                pages.put(blocks.get(block).name() + "@" + page, null);
            }
        });
        return new Content(pages, Arrays.copyOfRange(stream, (int) layout.tailOffset(), stream.length));
    }

    static Content content(List<Page> pages, byte[] tail) {
        Map<String, byte[]> m = new LinkedHashMap<>();
        for (Page p : pages) {
            m.put(p.block() + "@" + p.index(), p.bytes());
        }
        return new Content(m, tail);
    }
}
