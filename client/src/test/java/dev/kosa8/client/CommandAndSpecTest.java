package dev.kosa8.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class CommandAndSpecTest {

    @Test
    void aCommandIsChangedByCopies() {
        Command base = Command.of("python3", "-c", "print(1)");
        Command c = base.env("A", "1").env("B", "2").cwd("/tmp").user("root").stdin("x".getBytes())
                .timeout(Duration.ofSeconds(5)).tag("t").openStdin();
        assertThat(base.env()).isEmpty();
        assertThat(base.stdin()).isNull();
        assertThat(c.argv()).containsExactly("python3", "-c", "print(1)");
        assertThat(c.env()).containsEntry("A", "1").containsEntry("B", "2");
        assertThat(c.cwd()).isEqualTo("/tmp");
        assertThat(c.user()).isEqualTo("root");
        assertThat(c.stdin()).isEqualTo("x".getBytes());
        assertThat(c.timeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(c.tag()).isEqualTo("t");
        assertThat(c.keepStdinOpen()).isTrue();
        assertThat(Command.shell("a | b").argv()).containsExactly("sh", "-c", "a | b");
    }

    @Test
    void aCommandRefusesWhatCannotRun() {
        assertThatThrownBy(Command::of).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("program");
        assertThatThrownBy(() -> Command.of("x").timeout(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aBackgroundCommandsBodyIsTheDaemonsJson() throws Exception {
        byte[] body = BackgroundProcess.body(Command.of("cat").env("K", "v").openStdin().timeout(Duration.ofMillis(1500)));
        Object v = Json.parse(body);
        assertThat(Json.list(Json.get(v, "command"))).asString().isEqualTo("[cat]");
        assertThat(Json.text(Json.get(v, "env"), "K")).isEqualTo("v");
        assertThat(Json.flag(v, "stdin")).isTrue();
        assertThat(Json.number(v, "timeoutSeconds")).isEqualTo(1);
        assertThat(Json.flag(Json.parse(BackgroundProcess.body(Command.of("true"))), "stdin")).isFalse();
    }

    @Test
    void aSpecSaysOnlyWhatWasSet() {
        assertThat(SandboxSpec.builder().build().query()).isEmpty();
        SandboxSpec s = SandboxSpec.builder().image("node dev").cpus(4).memoryMiB(2048).workspace(Path.of("/w/p"))
                .network("closed").allow("pypi.org").allow("@npm").secret("OPENAI").publish("8080:80").keep(true)
                .build();
        assertThat(s.query()).isEqualTo("image=node+dev&cpus=4&memoryMiB=2048&workspace=%2Fw%2Fp&net=closed"
                + "&allow=pypi.org&allow=%40npm&secret=OPENAI&port=8080%3A80");
        assertThat(s.keep()).isTrue();
    }

    @Test
    void aSpecRefusesNonsense() {
        assertThatThrownBy(() -> SandboxSpec.builder().network("wide").build())
                .hasMessageContaining("closed, open or none");
        assertThatThrownBy(() -> SandboxSpec.builder().cpus(-1).build()).hasMessageContaining("negative");
    }

    @Test
    void anExecResultReadsAsText() {
        ExecResult r = new ExecResult(3, "out".getBytes(StandardCharsets.UTF_8), "é".getBytes(StandardCharsets.UTF_8),
                false);
        assertThat(r.stdout()).isEqualTo("out");
        assertThat(r.stderr()).isEqualTo("é");
        assertThat(r.succeeded()).isFalse();
        assertThat(r.toString()).contains("exitCode=3");
    }
}
