package dev.kosa8.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.util.List;
import org.junit.jupiter.api.Test;

class CliTest {
    @Test
    void parsesMemorySizesAsUsersWriteThem() {
        assertThat(Sizes.mebibytes("512M")).isEqualTo(512);
        assertThat(Sizes.mebibytes("2G")).isEqualTo(2048);
        assertThat(Sizes.mebibytes("2GiB")).isEqualTo(2048);
        assertThat(Sizes.mebibytes("1024")).isEqualTo(1024);
        assertThatThrownBy(() -> Sizes.mebibytes("lots")).isInstanceOf(KosaException.class)
                .hasMessageContaining("cannot read memory size");
    }

    @Test
    void tellsSandboxPathsFromHostPaths() {
        assertThat(CpCommand.isRemote("0123abcd:/root/x")).isTrue();
        assertThat(CpCommand.isRemote("./file")).isFalse();
        assertThat(CpCommand.isRemote("C:/windows")).isFalse();
    }

    @Test
    void refusesAnExecWithoutACommandOrWithABadEnv() {
        ExecOptions o = new ExecOptions();
        assertThatThrownBy(() -> o.spec(List.of())).isInstanceOf(KosaException.class)
                .hasMessageContaining("no command given");
        o.env.add("NOEQUALS");
        assertThatThrownBy(() -> o.spec(List.of("true"))).isInstanceOf(KosaException.class)
                .hasMessageContaining("bad --env 'NOEQUALS'")
                .satisfies(e -> assertThat(((KosaException) e).suggestion()).contains("NAME=VALUE"));
    }

    @Test
    void helpTeachesByExample() {
        var sw = new java.io.StringWriter();
        var cl = Main.commandLine();
        cl.setOut(new java.io.PrintWriter(sw));
        cl.execute("run", "--help");
        assertThat(sw.toString()).contains("kosa8 run -- python3 -c 'print(6*7)'").contains("--memory");
    }
}
