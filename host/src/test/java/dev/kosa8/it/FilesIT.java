package dev.kosa8.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLEncoder;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Guest file operations through the daemon's REST API (docs/api.md, "Files"), against one real sandbox: stat, list,
 * mkdir -p, remove, rename, content written and read, a watch seeing a guest program's write, the errors each
 * carries (a missing file, a directory already there, a path too long), and the bounds a watch keeps (its pending
 * events, the watches a sandbox may have).
 */
class FilesIT {
    static final Duration T = Duration.ofMinutes(3);
    private static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    static final SharedSandbox SANDBOX = new SharedSandbox();

    /** A response: status, raw body, and the body as JSON when it is JSON. */
    record Answer(int status, byte[] body) {
        JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new AssertionError("not JSON: " + new String(body, StandardCharsets.UTF_8));
            }
        }

        @Override
        public String toString() {
            return status + " " + new String(body, StandardCharsets.UTF_8);
        }
    }

    /** One HTTP/1.1 request on the daemon's socket, as any client of the API would send it. */
    static Answer call(String method, String pathAndQuery, byte[] body) throws IOException {
        var socket = Kosa.HOME.resolve("run/kosa8d.sock");
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            OutputStream out = Channels.newOutputStream(ch);
            out.write((method + " " + pathAndQuery + " HTTP/1.1\r\nHost: kosa8\r\nConnection: close\r\n"
                    + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
            out.write(body);
            out.flush();
            InputStream in = Channels.newInputStream(ch);
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                int b = in.read();
                if (b < 0) {
                    throw new IOException("the daemon closed before its answer's head: " + head);
                }
                head.write(b);
            }
            String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
            int status = Integer.parseInt(lines[0].split(" ")[1]);
            int length = -1;
            for (String l : lines) {
                if (l.toLowerCase().startsWith("content-length:")) {
                    length = Integer.parseInt(l.substring(15).strip());
                }
            }
            return new Answer(status, length >= 0 ? in.readNBytes(length) : in.readAllBytes());
        }
    }

    static String files(SharedSandbox.Booted box, String rest) {
        return "/v1/sandboxes/" + box.id() + "/files" + rest;
    }

    static String q(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    static JsonNode ok(String method, String pathAndQuery, byte[] body) throws IOException {
        Answer a = call(method, pathAndQuery, body);
        assertThat(a.status()).as("%s %s: %s", method, pathAndQuery, a).isBetween(200, 299);
        return a.json();
    }

    static JsonNode ok(String method, String pathAndQuery) throws IOException {
        return ok(method, pathAndQuery, new byte[0]);
    }

    /** Asserts a failure's status and code. */
    static void fails(Answer a, int status, String code) {
        assertThat(a.status()).as("%s", a).isEqualTo(status);
        assertThat(a.json().path("code").asText()).as("%s", a).isEqualTo(code);
    }

    @Test
    void eachOperationOnARealGuest(SharedSandbox.Booted box) throws Exception {
        JsonNode passwd = ok("GET", files(box, "/stat?path=/etc/passwd"));
        assertThat(passwd.path("type").asText()).isEqualTo("file");
        assertThat(passwd.path("owner").asText()).isEqualTo("root");
        assertThat(passwd.path("size").asLong()).isPositive();
        JsonNode bin = ok("GET", files(box, "/stat?path=/bin"));
        assertThat(bin.path("type").asText()).isEqualTo("symlink");
        assertThat(bin.path("symlinkTarget").asText()).isEqualTo("usr/bin");
        assertThat(ok("GET", files(box, "/stat?path=/bin&follow=true")).path("type").asText()).isEqualTo("directory");

        JsonNode made = ok("POST", files(box, "/mkdir?path=/tmp/ops/a/b&user=nobody"));
        assertThat(made.path("type").asText()).isEqualTo("directory");
        assertThat(made.path("owner").asText()).isEqualTo("nobody");
        assertThat(ok("GET", files(box, "/stat?path=/tmp/ops/a")).path("owner").asText()).isEqualTo("nobody");

        byte[] content = "hello from the host\n".getBytes(StandardCharsets.UTF_8);
        JsonNode written = ok("PUT", files(box, "/content?path=/tmp/ops/a/b/f.txt&mode=600&user=nobody"), content);
        assertThat(written.path("size").asLong()).isEqualTo(content.length);
        assertThat(written.path("mode").asText()).isEqualTo("0600");
        assertThat(written.path("owner").asText()).isEqualTo("nobody");
        Answer read = call("GET", files(box, "/content?path=/tmp/ops/a/b/f.txt"), new byte[0]);
        assertThat(read.status()).isEqualTo(200);
        assertThat(read.body()).isEqualTo(content);
        // a guest program sees what was written, as its user
        assertThat(box.exec("stat", "-c", "%U %a %s", "/tmp/ops/a/b/f.txt").stdout().strip())
                .isEqualTo("nobody 600 " + content.length);
        // parents are made for a write unless asked not to
        ok("PUT", files(box, "/content?path=/tmp/ops/new/dir/g"), new byte[] {1});
        fails(call("PUT", files(box, "/content?path=/tmp/ops/none/g&parents=false"), new byte[] {1}), 404,
                "NOT_FOUND");

        JsonNode list = ok("GET", files(box, "/list?path=/tmp/ops&depth=2"));
        List<String> paths = new ArrayList<>();
        list.path("entries").forEach(e -> paths.add(e.path("path").asText()));
        assertThat(paths).containsExactlyInAnyOrder("/tmp/ops/a", "/tmp/ops/a/b", "/tmp/ops/new", "/tmp/ops/new/dir");
        List<String> deeper = new ArrayList<>();
        ok("GET", files(box, "/list?path=/tmp/ops&depth=3")).path("entries")
                .forEach(e -> deeper.add(e.path("path").asText()));
        assertThat(deeper).contains("/tmp/ops/a/b/f.txt", "/tmp/ops/new/dir/g").hasSize(6);
        assertThat(list.path("truncated").asBoolean()).isFalse();
        JsonNode cut = ok("GET", files(box, "/list?path=/tmp/ops&depth=3&max=2"));
        assertThat(cut.path("entries").size()).isEqualTo(2);
        assertThat(cut.path("truncated").asBoolean()).isTrue();

        JsonNode moved = ok("POST", files(box, "/rename?from=/tmp/ops/a/b/f.txt&to=/tmp/ops/moved.txt"));
        assertThat(moved.path("path").asText()).isEqualTo("/tmp/ops/moved.txt");
        ok("PUT", files(box, "/content?path=/tmp/ops/other"), new byte[] {2});
        fails(call("POST", files(box, "/rename?from=/tmp/ops/other&to=/tmp/ops/moved.txt"), new byte[0]), 409,
                "EXISTS");
        ok("POST", files(box, "/rename?from=/tmp/ops/other&to=/tmp/ops/moved.txt&replace=true"));
        assertThat(call("GET", files(box, "/content?path=/tmp/ops/moved.txt"), new byte[0]).body())
                .containsExactly(2);

        fails(call("DELETE", files(box, "?path=/tmp/ops/a"), new byte[0]), 409, "NOT_EMPTY");
        ok("DELETE", files(box, "?path=/tmp/ops/moved.txt"));
        ok("DELETE", files(box, "?path=/tmp/ops&recursive=true"));
        fails(call("GET", files(box, "/stat?path=/tmp/ops"), new byte[0]), 404, "NOT_FOUND");
    }

    @Test
    void errorsSayWhatKindTheyAre(SharedSandbox.Booted box) throws Exception {
        fails(call("GET", files(box, "/stat?path=/no/such/file"), new byte[0]), 404, "NOT_FOUND");
        fails(call("GET", files(box, "/content?path=/no/such/file"), new byte[0]), 404, "NOT_FOUND");
        fails(call("GET", files(box, "/list?path=/etc/passwd"), new byte[0]), 400, "NOT_DIRECTORY");
        fails(call("GET", files(box, "/content?path=/etc"), new byte[0]), 400, "IS_DIRECTORY");
        ok("POST", files(box, "/mkdir?path=/tmp/twice"));
        fails(call("POST", files(box, "/mkdir?path=/tmp/twice"), new byte[0]), 409, "EXISTS");
        ok("POST", files(box, "/mkdir?path=/tmp/twice&existOk=true"));
        fails(call("POST", files(box, "/mkdir?path=/tmp/x&user=ghost"), new byte[0]), 400, "INVALID");
        // too long: a path beyond PATH_MAX, a name beyond NAME_MAX; never sent to the guest
        fails(call("GET", files(box, "/stat?path=/" + "a/".repeat(2100)), new byte[0]), 400, "TOO_LONG");
        fails(call("POST", files(box, "/mkdir?path=/tmp/" + "n".repeat(256)), new byte[0]), 400, "TOO_LONG");
        // unsafe or malformed paths
        fails(call("GET", files(box, "/stat?path=relative"), new byte[0]), 400, "INVALID");
        fails(call("GET", files(box, "/stat?path=/etc%00/passwd"), new byte[0]), 400, "INVALID");
        fails(call("GET", files(box, "/stat"), new byte[0]), 400, "INVALID");
        fails(call("DELETE", files(box, "?path=/&recursive=true"), new byte[0]), 400, "INVALID");
        fails(call("GET", files(box, "/list?path=/&depth=0"), new byte[0]), 400, "INVALID");
    }

    private static List<JsonNode> pollUntil(SharedSandbox.Booted box, String watch, java.util.function.Predicate<
            List<JsonNode>> done) throws Exception {
        List<JsonNode> events = new ArrayList<>();
        long deadline = System.nanoTime() + T.toNanos();
        while (!done.test(events)) {
            assertThat(System.nanoTime()).as("events so far: %s", events).isLessThan(deadline);
            JsonNode b = ok("GET", files(box, "/watches/" + watch + "?wait=20&max=10000"));
            b.path("events").forEach(events::add);
            assertThat(b.path("ended").asBoolean()).as("ended: %s", b).isFalse();
        }
        return events;
    }

    private static boolean seen(List<JsonNode> events, String type, String path) {
        return events.stream().anyMatch(e -> e.path("type").asText().equals(type)
                && e.path("path").asText().equals(path));
    }

    @Test
    void aWatchSeesAGuestProgramsChanges(SharedSandbox.Booted box) throws Exception {
        ok("POST", files(box, "/mkdir?path=/tmp/watched/sub&existOk=true"));
        String w = ok("POST", files(box, "/watches?path=/tmp/watched&recursive=true")).path("id").asText();
        try {
            assertThat(box.exec("sh", "-c", "echo hi > /tmp/watched/sub/x; chmod 600 /tmp/watched/sub/x; "
                    + "mv /tmp/watched/sub/x /tmp/watched/y; mkdir /tmp/watched/new; echo 2 > /tmp/watched/new/z; "
                    + "rm /tmp/watched/y").exitCode()).isZero();
            List<JsonNode> events = pollUntil(box, w, ev -> seen(ev, "REMOVE", "/tmp/watched/y"));
            assertThat(seen(events, "CREATE", "/tmp/watched/sub/x")).as("%s", events).isTrue();
            assertThat(seen(events, "WRITE", "/tmp/watched/sub/x")).as("%s", events).isTrue();
            assertThat(seen(events, "CHMOD", "/tmp/watched/sub/x")).as("%s", events).isTrue();
            assertThat(seen(events, "RENAME", "/tmp/watched/sub/x")).as("%s", events).isTrue();
            assertThat(seen(events, "CREATE", "/tmp/watched/y")).as("%s", events).isTrue();
            assertThat(seen(events, "CREATE", "/tmp/watched/new")).as("%s", events).isTrue();
            assertThat(seen(events, "CREATE", "/tmp/watched/new/z")).as("%s", events).isTrue();
        } finally {
            ok("DELETE", files(box, "/watches/" + w));
        }
        fails(call("GET", files(box, "/watches/" + w), new byte[0]), 404, "NOT_FOUND");
        fails(call("POST", files(box, "/watches?path=/no/such/dir"), new byte[0]), 404, "NOT_FOUND");
        fails(call("POST", files(box, "/watches?path=/etc/passwd"), new byte[0]), 400, "NOT_DIRECTORY");
    }

    @Test
    void aWatchKeepsItsBoundOfPendingEventsAndASandboxItsBoundOfWatches(SharedSandbox.Booted box) throws Exception {
        for (JsonNode w : ok("GET", files(box, "/watches"))) {
            ok("DELETE", files(box, "/watches/" + w.path("id").asText()));
        }
        ok("POST", files(box, "/mkdir?path=/tmp/flood&existOk=true"));
        JsonNode watch = ok("POST", files(box, "/watches?path=/tmp/flood"));
        String w = watch.path("id").asText();
        // 6,000 files made while no one polls: more events than the 4,096 a watch keeps
        assertThat(box.exec("sh", "-c", "cd /tmp/flood && seq 1 6000 | xargs touch").exitCode()).isZero();
        // touch has returned, but the guest's agent may still be reading the flood's events (on a loaded host, a
        // CI run found it 2,000 files behind): wait until the count of lost events stops moving, so what is kept
        // and what comes after the overflow are the flood's end and nothing of it
        long deadline = System.nanoTime() + T.toNanos();
        JsonNode state = null;
        long lostBefore = -1;
        int still = 0;
        while (System.nanoTime() < deadline) {
            Thread.sleep(1000);
            state = null;
            for (JsonNode x : ok("GET", files(box, "/watches"))) {
                if (x.path("id").asText().equals(w)) {
                    state = x;
                }
            }
            assertThat(state).isNotNull();
            long lost = state.path("lost").asLong();
            still = lost > 0 && lost == lostBefore ? still + 1 : 0;
            if (still == 3) { // 3 s without one more event lost
                break;
            }
            lostBefore = lost;
        }
        assertThat(state.path("pending").asInt()).isEqualTo(4096);
        assertThat(state.path("lost").asLong()).isPositive();
        List<JsonNode> events = pollUntil(box, w, ev -> ev.stream().anyMatch(e -> e.path("type").asText()
                .equals("OVERFLOW")));
        assertThat(events).hasSize(4097);
        assertThat(events.getLast().path("path").asText()).isEqualTo("/tmp/flood");
        // the watch goes on after its overflow
        box.exec("touch", "/tmp/flood/after");
        assertThat(seen(pollUntil(box, w, ev -> seen(ev, "CREATE", "/tmp/flood/after")), "CREATE",
                "/tmp/flood/after")).isTrue();

        // 16 watches per sandbox: the 17th is refused
        List<String> ids = new ArrayList<>(List.of(w));
        for (int i = 1; i < 16; i++) {
            ids.add(ok("POST", files(box, "/watches?path=/tmp")).path("id").asText());
        }
        fails(call("POST", files(box, "/watches?path=/tmp"), new byte[0]), 429, "LIMIT");
        for (String id : ids) {
            ok("DELETE", files(box, "/watches/" + id));
        }
        ok("DELETE", files(box, "/watches/" + ok("POST", files(box, "/watches?path=/tmp")).path("id").asText()));
        ok("DELETE", files(box, "?path=/tmp/flood&recursive=true"));
    }

    private static int inotifyInstances(SharedSandbox.Booted box) {
        return Integer.parseInt(box.exec("sh", "-c", "find /proc/[0-9]*/fd -lname 'anon_inode:inotify' 2>/dev/null"
                + " | wc -l").stdout().strip());
    }

    /**
     * A rewind ends the watches it rewinds away from, saying so; the watch the restored guest still holds (it was
     * made before the checkpoint) is told to stop at its first report, so its inotify instance goes.
     */
    @Test
    void aRewindEndsTheWatchSayingSoAndTheGuestsRestoredWatchStops(SharedSandbox.Booted box) throws Exception {
        ok("POST", files(box, "/mkdir?path=/tmp/rw&existOk=true"));
        int before = inotifyInstances(box);
        String w = ok("POST", files(box, "/watches?path=/tmp/rw")).path("id").asText();
        assertThat(inotifyInstances(box)).isEqualTo(before + 1);
        String checkpoint = Kosa.ok(T, "checkpoint", "--wait", box.id()).stdout().strip();
        Kosa.ok(T, "rewind", box.id(), checkpoint);
        JsonNode b = ok("GET", files(box, "/watches/" + w + "?wait=30"));
        assertThat(b.path("ended").asBoolean()).as("%s", b).isTrue();
        assertThat(b.path("reason").asText()).contains("rewound to checkpoint " + checkpoint);
        fails(call("GET", files(box, "/watches/" + w), new byte[0]), 404, "NOT_FOUND");
        // the restored watch reports this, and is told to stop
        box.exec("touch", "/tmp/rw/after-rewind");
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (inotifyInstances(box) > before && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
        assertThat(inotifyInstances(box)).isEqualTo(before);
        // and a new watch works
        String again = ok("POST", files(box, "/watches?path=/tmp/rw")).path("id").asText();
        box.exec("touch", "/tmp/rw/new");
        assertThat(seen(pollUntil(box, again, ev -> seen(ev, "CREATE", "/tmp/rw/new")), "CREATE", "/tmp/rw/new"))
                .isTrue();
        ok("DELETE", files(box, "/watches/" + again));
    }
}
