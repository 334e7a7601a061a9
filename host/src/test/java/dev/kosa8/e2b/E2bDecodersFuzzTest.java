package dev.kosa8.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * Every decoder of what an E2B client sends, under arbitrary input: the Connect envelope, the JSON request
 * bodies, the multipart uploads, the paths. Each either decodes or refuses with its own error type (a
 * ConnectError or an ApiError, answered to the client), never anything else; and what is framed decodes back.
 */
class E2bDecodersFuzzTest {
    @Property(tries = 2000)
    void anEnvelopeDecodesOrIsRefusedCleanly(@ForAll @Size(max = 64) byte[] body,
                                             @ForAll @IntRange(min = 0, max = 40) int max) {
        try {
            List<ConnectEnvelope.Frame> frames = ConnectEnvelope.decodeAll(body, max);
            int total = 0;
            for (ConnectEnvelope.Frame f : frames) {
                assertThat(f.message().length).isLessThanOrEqualTo(max);
                total += ConnectEnvelope.HEADER + f.message().length;
            }
            assertThat(total).isEqualTo(body.length);
        } catch (ConnectError e) {
            assertThat(e.code()).isIn(ConnectError.Code.INVALID_ARGUMENT, ConnectError.Code.RESOURCE_EXHAUSTED);
            assertThat(e.getMessage()).isNotBlank();
        }
    }

    @Property(tries = 1000)
    void aFramedMessageDecodesBackAndAnyCutOfItIsRefused(@ForAll @Size(max = 300) byte[] message,
                                                         @ForAll @IntRange(min = 1, max = 304) int cut) {
        byte[] framed = ConnectEnvelope.frame(0, message);
        assertThat(ConnectEnvelope.single(framed, 1 << 20)).isEqualTo(message);
        int keep = Math.min(cut, framed.length) - 1;
        byte[] truncated = java.util.Arrays.copyOf(framed, keep);
        if (keep == 0) {
            assertThatThrownBy(() -> ConnectEnvelope.single(truncated, 1 << 20)).isInstanceOf(ConnectError.class);
        } else {
            assertThatThrownBy(() -> ConnectEnvelope.single(truncated, 1 << 20)).isInstanceOf(ConnectError.class)
                    .hasMessageContaining("truncated");
        }
    }

    @Test
    void anOversizedEnvelopeIsRefusedBeforeItsBytesAreTaken() {
        byte[] header = {0, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff};
        assertThatThrownBy(() -> ConnectEnvelope.single(header, ConnectCall.MAX_MESSAGE))
                .isInstanceOf(ConnectError.class)
                .satisfies(e -> assertThat(((ConnectError) e).code()).isEqualTo(ConnectError.Code.RESOURCE_EXHAUSTED));
    }

    @Test
    void twoMessagesACompressedOneAndAnEndFrameAreRefusedAsARequest() {
        byte[] one = ConnectEnvelope.frame(0, "{}".getBytes(StandardCharsets.UTF_8));
        byte[] two = new byte[one.length * 2];
        System.arraycopy(one, 0, two, 0, one.length);
        System.arraycopy(one, 0, two, one.length, one.length);
        assertThatThrownBy(() -> ConnectEnvelope.single(two, 100)).hasMessageContaining("exactly one");
        assertThatThrownBy(() -> ConnectEnvelope.single(ConnectEnvelope.frame(1, new byte[2]), 100))
                .hasMessageContaining("compressed");
        assertThatThrownBy(() -> ConnectEnvelope.single(ConnectEnvelope.frame(2, new byte[2]), 100))
                .hasMessageContaining("flags");
    }

    @Provide
    Arbitrary<String> jsonish() {
        return Arbitraries.oneOf(
                Arbitraries.strings().ofMaxLength(80),
                Arbitraries.of("{}", "[]", "null", "1", "\"s\"", "{\"process\":{\"cmd\":1}}",
                        "{\"process\":{\"cmd\":\"x\",\"args\":[1]}}", "{\"process\":{\"pid\":\"12\"}}",
                        "{\"process\":{\"pid\":-1}}", "{\"input\":{\"stdin\":\"!!\"}}", "{\"signal\":\"SIGNAL_SIGHUP\"}",
                        "{\"process\":{\"envs\":{\"A\":1}}}", "{\"timeout\":1e99}", "{\"metadata\":[]}",
                        "{\"templateID\":{}}", "{\"a\":", "{\"process\":{\"pid\":4294967296}}"),
                Arbitraries.strings().withChars("{}[]\":,0123456789abcpidstnul -").ofMaxLength(60));
    }

    @Property(tries = 2000)
    void aJsonBodyDecodesOrIsRefusedWithTheClientsOwnError(@ForAll("jsonish") String body) {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        try {
            Json j = Json.forConnect(b);
            Json p = j.object("process");
            p.string("cmd", "");
            p.strings("args");
            p.stringMap("envs");
            p.number("pid", 0, 1, 0xffffffffL);
            j.object("input").bytes("stdin");
            if (j.has("signal")) {
                ProcessService.signal(j.raw("signal"));
            }
            j.bool("stdin", false);
        } catch (ConnectError e) {
            assertThat(e.code()).isEqualTo(ConnectError.Code.INVALID_ARGUMENT);
        }
        try {
            Json j = Json.forApi(b);
            j.string("templateID", "");
            j.stringMap("metadata");
            j.stringMap("envVars");
            j.number("timeout", 0, 0, 86400);
            j.bool("autoPause", false);
        } catch (ApiError e) {
            assertThat(e.status()).isEqualTo(400);
        }
    }

    @Property(tries = 1000)
    void aPathResolvesUnderRootWithoutGoingUpOrIsRefused(@ForAll("paths") String path) {
        try {
            String abs = FileTransfer.resolve(path, "user");
            assertThat(abs).startsWith("/").doesNotContain("/../").doesNotContain("//").doesNotEndWith("/..");
            assertThat(abs).doesNotContain("\0");
        } catch (ApiError e) {
            assertThat(e.status()).isEqualTo(400);
        }
    }

    @Provide
    Arbitrary<String> paths() {
        return Arbitraries.strings().withChars("/.a\0b~").ofMaxLength(30);
    }

    @Test
    void pathsAreResolvedAgainstTheHomeAndEscapesRefused() {
        assertThat(FileTransfer.resolve("notes/a.txt", "user")).isEqualTo("/home/user/notes/a.txt");
        assertThat(FileTransfer.resolve("a", "root")).isEqualTo("/root/a");
        assertThat(FileTransfer.resolve("//tmp/./x", "user")).isEqualTo("/tmp/x");
        for (String bad : List.of("../../etc/shadow", "/tmp/../etc/passwd", "a\0b", "", "/", "..")) {
            assertThatThrownBy(() -> FileTransfer.resolve(bad, "user")).isInstanceOf(ApiError.class);
        }
    }

    static byte[] multipart(String boundary, List<String> names, List<byte[]> contents) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(("preamble\r\n").getBytes(StandardCharsets.ISO_8859_1));
        for (int i = 0; i < names.size(); i++) {
            out.writeBytes(("--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\""
                    + names.get(i) + "\"\r\nContent-Type: application/octet-stream\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.writeBytes(contents.get(i));
            out.writeBytes("\r\n".getBytes(StandardCharsets.ISO_8859_1));
        }
        out.writeBytes(("--" + boundary + "--\r\n").getBytes(StandardCharsets.ISO_8859_1));
        return out.toByteArray();
    }

    @Property(tries = 500)
    void multipartPartsComeBackExactly(@ForAll @Size(min = 1, max = 4) List<@Size(max = 200) byte[]> contents,
                                       @ForAll("boundaries") String boundary) throws IOException {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < contents.size(); i++) {
            names.add("/tmp/f" + i);
        }
        byte[] body = multipart(boundary, names, contents);
        Multipart mp = new Multipart(new ByteArrayInputStream(body), boundary);
        List<byte[]> back = new ArrayList<>();
        Multipart.Part p;
        while ((p = mp.next()) != null) {
            assertThat(p.filename()).isEqualTo(names.get(back.size()));
            back.add(p.content().readAllBytes());
        }
        assertThat(back).hasSize(contents.size());
        for (int i = 0; i < contents.size(); i++) {
            assertThat(back.get(i)).isEqualTo(contents.get(i));
        }
    }

    @Property(tries = 30)
    void largePartsFullOfNearBoundariesComeBackExactly(@ForAll long seed) throws IOException {
        java.util.Random r = new java.util.Random(seed);
        byte[] near = "\r\n--b0undary".getBytes(StandardCharsets.ISO_8859_1);
        List<byte[]> contents = new ArrayList<>();
        for (int p = 0; p < 2; p++) {
            ByteArrayOutputStream c = new ByteArrayOutputStream();
            while (c.size() < 200_000 + r.nextInt(100_000)) {
                if (r.nextInt(8) == 0) {
                    c.write(near, 0, r.nextInt(near.length)); // a prefix of the delimiter, never all of it
                } else {
                    c.write(128 + r.nextInt(128)); // never a byte of the delimiter, so none is completed by chance
                }
            }
            contents.add(c.toByteArray());
        }
        byte[] body = multipart("b0undary", List.of("/a", "/b"), contents);
        // fed in pieces of random sizes, as a socket delivers it
        Multipart mp = new Multipart(new java.io.InputStream() {
            int at;

            @Override
            public int read() {
                return at < body.length ? body[at++] & 0xff : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (at >= body.length) {
                    return -1;
                }
                int n = Math.min(Math.min(len, 1 + r.nextInt(9000)), body.length - at);
                System.arraycopy(body, at, b, off, n);
                at += n;
                return n;
            }
        }, "b0undary");
        for (byte[] expected : contents) {
            Multipart.Part part = mp.next();
            assertThat(part).isNotNull();
            assertThat(part.content().readAllBytes()).isEqualTo(expected);
        }
        assertThat(mp.next()).isNull();
    }

    @Provide
    Arbitrary<String> boundaries() {
        return Arbitraries.oneOf(Arbitraries.strings().alpha().numeric().ofMinLength(1).ofMaxLength(40),
                Arbitraries.of("-", "a", "----formdata-undici-0123456789"));
    }

    @Property(tries = 2000)
    void anyMultipartBodyParsesOrIsRefusedAsABadRequest(@ForAll @Size(max = 300) byte[] noise,
                                                        @ForAll @IntRange(min = 0, max = 300) int cut) {
        byte[] good = multipart("b0undary", List.of("/tmp/x"), List.of(noise));
        byte[][] inputs = {noise, java.util.Arrays.copyOf(good, Math.min(cut, good.length))};
        for (byte[] in : inputs) {
            try {
                Multipart mp = new Multipart(new ByteArrayInputStream(in), "b0undary");
                Multipart.Part p;
                int parts = 0;
                while ((p = mp.next()) != null && parts++ < 10) {
                    p.content().readAllBytes();
                }
            } catch (ApiError e) {
                assertThat(e.status()).isEqualTo(400);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }
    }

    @Test
    void partHeadersPastTheirBoundAreRefused() {
        byte[] body = ("--b\r\nX-Long: " + "h".repeat(Multipart.MAX_HEADERS) + "\r\n\r\nx\r\n--b--\r\n")
                .getBytes(StandardCharsets.ISO_8859_1);
        assertThatThrownBy(() -> new Multipart(new ByteArrayInputStream(body), "b").next())
                .isInstanceOf(ApiError.class).hasMessageContaining("headers are longer");
    }

    @Test
    void theSdksMetadataFilterIsDecoded() {
        assertThat(ControlPlane.metadataQuery("suite=k%20x&name=a")).containsEntry("suite", "k x")
                .containsEntry("name", "a");
        assertThatThrownBy(() -> ControlPlane.metadataQuery("novalue")).isInstanceOf(ApiError.class);
        assertThatThrownBy(() -> ControlPlane.metadataQuery("a=%zz")).isInstanceOf(ApiError.class);
    }

    @Test
    void basicAuthNamesTheUser() {
        assertThat(Envd.basicUser("Basic " + java.util.Base64.getEncoder()
                .encodeToString("root:".getBytes(StandardCharsets.UTF_8)))).isEqualTo("root");
        assertThat(Envd.basicUser(null)).isEmpty();
        assertThatThrownBy(() -> Envd.basicUser("Bearer x")).isInstanceOf(ApiError.class);
        assertThatThrownBy(() -> Envd.basicUser("Basic !!!")).isInstanceOf(ApiError.class);
        assertThatThrownBy(() -> Envd.basicUser("Basic " + java.util.Base64.getEncoder()
                .encodeToString("../x:".getBytes(StandardCharsets.UTF_8)))).isInstanceOf(ApiError.class);
    }
}
