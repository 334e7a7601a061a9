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

    /** accept and reject take the same arguments from one mixin, and a bad combination is refused before any request. */
    @Test
    void acceptAndRejectTakeTheSandboxAndItsHeldPathsOrAll() {
        for (String verb : List.of("accept", "reject")) {
            var parsed = Main.commandLine().parseArgs(verb, "3f2a", ".envrc", ".git/hooks").subcommand();
            HeldAction held = parsed.commandSpec().mixins().get("held").userObject() instanceof HeldAction h ? h : null;
            assertThat(held).as(verb).isNotNull();
            assertThat(held.id).isEqualTo("3f2a");
            assertThat(held.paths).containsExactly(".envrc", ".git/hooks");
            assertThat(held.all).isFalse();
            HeldAction all = (HeldAction) Main.commandLine().parseArgs(verb, "3f2a", "--all").subcommand()
                    .commandSpec().mixins().get("held").userObject();
            assertThat(all.all).isTrue();
            assertThat(all.paths).isEmpty();
            HeldAction both = (HeldAction) Main.commandLine().parseArgs(verb, "3f2a", "--all", ".envrc").subcommand()
                    .commandSpec().mixins().get("held").userObject();
            assertThatThrownBy(() -> both.run(null, verb)).isInstanceOf(KosaException.class)
                    .hasMessageContaining("--all and paths together");
            var help = new java.io.StringWriter();
            var cl = Main.commandLine();
            cl.setOut(new java.io.PrintWriter(help));
            cl.execute(verb, "--help");
            assertThat(help.toString()).contains("ID").contains("PATH").contains("--all");
        }
    }

    @Test
    void helpTeachesByExample() {
        var sw = new java.io.StringWriter();
        var cl = Main.commandLine();
        cl.setOut(new java.io.PrintWriter(sw));
        cl.execute("run", "--help");
        assertThat(sw.toString()).contains("kosa8 run -- python3 -c 'print(6*7)'").contains("--memory");
    }

    @Test
    void portsSubcommandsParseWithoutTheParentsPositionalsAndEachHelpTeaches() {
        var parsed = Main.commandLine().parseArgs("port", "ls", "3f2a");
        assertThat(parsed.subcommand().subcommand().commandSpec().name()).isEqualTo("ls");
        var rm = Main.commandLine().parseArgs("port", "rm", "3f2a", "8000");
        assertThat(rm.subcommand().subcommand().commandSpec().name()).isEqualTo("rm");
        var publish = Main.commandLine().parseArgs("port", "3f2a", "8000", "8080");
        assertThat(publish.subcommand().matchedPositionals()).hasSize(3);
        var sw = new java.io.StringWriter();
        var cl = Main.commandLine();
        cl.setOut(new java.io.PrintWriter(sw));
        cl.execute("port", "--help");
        assertThat(sw.toString()).contains("127.0.0.1:HOST_PORT").contains("kosa8 port $id 8000")
                .contains("--net none");
        var err = new java.io.StringWriter();
        cl.setErr(new java.io.PrintWriter(err));
        assertThat(cl.execute("port", "3f2a")).isEqualTo(2);
        assertThat(err.toString()).contains("Missing required parameters: 'GUEST_PORT'");
        var create = new java.io.StringWriter();
        cl.setOut(new java.io.PrintWriter(create));
        cl.execute("create", "--help");
        assertThat(create.toString()).contains("-p, --publish=[HOST:]GUEST");
    }

    @Test
    void lsShowsWhoMadeEachSandbox() {
        assertThat(LsCommand.by(java.util.Map.of("createdBy", "mcp:claude-code"))).isEqualTo("mcp:claude-code");
        assertThat(LsCommand.by(java.util.Map.of("id", "3f2a"))).isEqualTo("-");
    }

    @Test
    void mcpHelpTeachesTheOneLineSetUps() {
        java.io.StringWriter out = new java.io.StringWriter();
        Main.commandLine().getSubcommands().get("mcp").usage(new java.io.PrintWriter(out));
        assertThat(out.toString()).contains("claude mcp add kosa8 -- kosa8 mcp").contains("--allow-policy-changes")
                .contains("mcpServers").contains("codex").contains("gemini");
    }
}
