package dev.kosa8.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DaemonConnectionTest {
    @TempDir
    Path dir;

    private static byte[] answer(int status, String json) {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        return ("HTTP/1.1 " + status + " X\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                + "\r\n\r\n" + json).getBytes(StandardCharsets.UTF_8);
    }

    private Object call(byte[] answer) throws Exception {
        try (OneShotServer s = new OneShotServer(dir, answer)) {
            return new DaemonConnection(s.socket(), "hint").call("GET", "/v1/x");
        }
    }

    @Test
    void aSuccessfulAnswerIsItsJson() throws Exception {
        assertThat(Json.text(call(answer(200, "{\"id\":\"abc\"}")), "id")).isEqualTo("abc");
    }

    @Test
    void eachKindOfErrorIsItsOwnException() {
        assertThatThrownBy(() -> call(answer(400, "{\"error\":\"no sandbox 'x'\",\"suggestion\":\"kosa8 ls\","
                + "\"kind\":\"USAGE\",\"exitCode\":2}"))).isInstanceOf(InvalidRequestException.class)
                .hasMessage("no sandbox 'x'").satisfies(e -> {
                    assertThat(((Kosa8Exception) e).suggestion()).isEqualTo("kosa8 ls");
                    assertThat(((Kosa8Exception) e).exitCode()).isEqualTo(2);
                });
        assertThatThrownBy(() -> call(answer(409, "{\"error\":\"stopped\",\"kind\":\"STATE\"}")))
                .isInstanceOf(SandboxStateException.class);
        assertThatThrownBy(() -> call(answer(429, "{\"error\":\"full\",\"kind\":\"LIMIT\",\"exitCode\":8}")))
                .isInstanceOf(LimitExceededException.class);
        assertThatThrownBy(() -> call(answer(500, "{\"error\":\"boom\",\"kind\":\"VM\"}")))
                .isExactlyInstanceOf(Kosa8Exception.class)
                .satisfies(e -> assertThat(((Kosa8Exception) e).kind()).isEqualTo(Kosa8Exception.Kind.VM));
        assertThatThrownBy(() -> call(answer(404, "{\"error\":\"/x: no such file\",\"kind\":\"FILE\","
                + "\"code\":\"NOT_FOUND\"}"))).isInstanceOf(SandboxFileException.class)
                .satisfies(e -> assertThat(((SandboxFileException) e).notFound()).isTrue());
        assertThatThrownBy(() -> call(answer(429, "{\"error\":\"16 watches\",\"kind\":\"FILE\",\"code\":\"LIMIT\"}")))
                .isInstanceOf(SandboxFileException.class)
                .satisfies(e -> assertThat(((Kosa8Exception) e).kind()).isEqualTo(Kosa8Exception.Kind.LIMIT));
        assertThatThrownBy(() -> call(answer(500, "{}"))).hasMessage("the daemon answered HTTP 500")
                .satisfies(e -> assertThat(((Kosa8Exception) e).kind()).isEqualTo(Kosa8Exception.Kind.INTERNAL));
    }

    @Test
    void aBrokenAnswerIsTheDaemonUnavailable() {
        assertThatThrownBy(() -> call("garbage\r\n\r\n".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(DaemonUnavailableException.class).hasMessageContaining("not an HTTP response");
        assertThatThrownBy(() -> call("HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(DaemonUnavailableException.class).hasMessageContaining("Content-Length");
        assertThatThrownBy(() -> call(answer(200, "{not json")))
                .isInstanceOf(DaemonUnavailableException.class).hasMessageContaining("not JSON");
        assertThatThrownBy(() -> call(new byte[0])).isInstanceOf(DaemonUnavailableException.class)
                .hasMessageContaining("closed the connection");
    }

    @Test
    void anUpgradeRefusedIsTheDaemonsError() {
        assertThatThrownBy(() -> {
            try (OneShotServer s = new OneShotServer(dir, answer(429, "{\"error\":\"64 streams\",\"kind\":\"LIMIT\"}"))) {
                new DaemonConnection(s.socket(), "").upgrade("/v1/sandboxes/x/exec");
            }
        }).isInstanceOf(LimitExceededException.class).hasMessage("64 streams");
    }

    @Test
    void anUpgradeNamesItsSandboxAndLeavesTheStreamUnread() throws Exception {
        byte[] a = "HTTP/1.1 101 Switching Protocols\r\nKosa8-Sandbox: 0123abcd\r\n\r\nFRAMES".getBytes(StandardCharsets.UTF_8);
        try (OneShotServer s = new OneShotServer(dir, a);
             DaemonConnection.Stream st = new DaemonConnection(s.socket(), "").upgrade("/v1/run")) {
            assertThat(st.sandbox()).isEqualTo("0123abcd");
            assertThat(new String(st.in().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("FRAMES");
            assertThat(s.request.get()).startsWith("POST /v1/run HTTP/1.1\r\n").contains("Upgrade: kosa8-stream");
        }
    }

    @Test
    void noDaemonIsSaidWithWhatToDo() {
        assertThatThrownBy(() -> Kosa8.connect(dir.resolve("none.sock")))
                .isInstanceOf(DaemonUnavailableException.class).hasMessageContaining("no kosa8 daemon answers")
                .satisfies(e -> assertThat(((Kosa8Exception) e).suggestion()).contains("kosa8 ls"));
        assertThatThrownBy(() -> new DaemonConnection(dir.resolve("none.sock"), "see the log").call("GET", "/"))
                .isInstanceOf(DaemonUnavailableException.class)
                .satisfies(e -> assertThat(((Kosa8Exception) e).suggestion()).isEqualTo("see the log"));
    }
}
