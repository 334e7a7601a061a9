package dev.kosa8.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The Dockerfile as kosa8 reads it, and the steps and config the build makes of it. */
class DockerfileTest {
    static final String FULL = """
            # syntax=docker/dockerfile:1
            ARG BASE=kosa8/debian
            FROM ${BASE}
            # a comment
            ARG GREETING=hello
            ENV APP_HOME=/srv/app \\
                # a comment inside a continuation is dropped
                MODE="two words"
            ENV LEGACY one two
            LABEL org.example.name="the app" version=1
            WORKDIR $APP_HOME
            COPY --chown=app:app ["src dir", "./"]
            COPY a.txt b.txt sub/
            ADD notes.md /notes.md
            RUN apt-get install -y jq && \\
                echo "$GREETING"
            RUN ["echo", "exec form"]
            USER app
            WORKDIR data
            ENTRYPOINT ["/usr/bin/env"]
            CMD jq --version
            """;

    static List<PlannedStep> plan(Dockerfile d, Map<String, String> buildArgs) {
        BuildState s = new BuildState("Dockerfile", d, buildArgs);
        s.base(d.from());
        s.start(ImageConfig.NONE);
        return d.body().stream().map(s::apply).toList();
    }

    @Test
    void everySupportedInstructionIsReadWithItsLineAndItsVariablesWhenTheBuildReachesIt() {
        Dockerfile d = Dockerfile.parse(FULL, "Dockerfile");
        assertThat(d.globalArgs()).extracting(Instruction.Arg::name).containsExactly("BASE");
        assertThat(new BuildState("Dockerfile", d, Map.of()).base(d.from())).isEqualTo("kosa8/debian");
        assertThat(new BuildState("Dockerfile", d, Map.of("BASE", "other")).base(d.from())).isEqualTo("other");
        assertThat(d.body()).extracting(Instruction::line)
                .containsExactly(5, 6, 9, 10, 11, 12, 13, 14, 15, 17, 18, 19, 20, 21);

        List<PlannedStep> steps = plan(d, Map.of("GREETING", "hi"));
        ImageConfig last = steps.getLast().config();
        assertThat(last.envMap()).containsExactly(Map.entry("APP_HOME", "/srv/app"), Map.entry("MODE", "two words"),
                Map.entry("LEGACY", "one two"));
        assertThat(last.labels()).containsEntry("org.example.name", "the app").containsEntry("version", "1");
        assertThat(last.workingDir()).isEqualTo("/srv/app/data");
        assertThat(last.user()).isEqualTo("app");
        assertThat(last.entrypoint()).containsExactly("/usr/bin/env");
        assertThat(last.cmd()).containsExactly("/bin/sh", "-c", "jq --version");
        assertThat(last.command(List.of())).containsExactly("/usr/bin/env", "/bin/sh", "-c", "jq --version");
        assertThat(last.command(List.of("id"))).containsExactly("/usr/bin/env", "id");

        PlannedStep.Workdir wd = (PlannedStep.Workdir) steps.get(4);
        assertThat(wd.path()).isEqualTo("/srv/app");
        PlannedStep.Copy json = (PlannedStep.Copy) steps.get(5);
        assertThat(json.sources()).containsExactly("src dir");
        assertThat(json.destination()).isEqualTo("/srv/app/");
        assertThat(json.chown()).isEqualTo("app:app");
        PlannedStep.Copy two = (PlannedStep.Copy) steps.get(6);
        assertThat(two.sources()).containsExactly("a.txt", "b.txt");
        assertThat(two.destination()).isEqualTo("/srv/app/sub/");
        assertThat(((PlannedStep.Copy) steps.get(7)).destination()).isEqualTo("/notes.md");
        PlannedStep.Run run = (PlannedStep.Run) steps.get(8);
        assertThat(run.argv()).containsExactly("/bin/sh", "-c", "apt-get install -y jq &&     echo \"$GREETING\"");
        assertThat(run.env()).containsEntry("GREETING", "hi").containsEntry("APP_HOME", "/srv/app");
        assertThat(run.workdir()).isEqualTo("/srv/app");
        assertThat(run.user()).isEmpty();
        assertThat(((PlannedStep.Run) steps.get(9)).argv()).containsExactly("echo", "exec form");
        assertThat(steps.get(11).key()).as("a later WORKDIR is under the earlier").isEqualTo("WORKDIR /srv/app/data");
    }

    @Test
    void eachStepsKeyChangesWithWhatDecidesItsResult() {
        Dockerfile d = Dockerfile.parse(FULL, "Dockerfile");
        List<PlannedStep> a = plan(d, Map.of());
        List<PlannedStep> b = plan(d, Map.of("GREETING", "other"));
        assertThat(a.get(8).key()).as("a RUN sees its build args").isNotEqualTo(b.get(8).key());
        assertThat(a.get(5).key()).isEqualTo(b.get(5).key());
        Dockerfile changedEnv = Dockerfile.parse(FULL.replace("/srv/app", "/opt/app"), "Dockerfile");
        assertThat(plan(changedEnv, Map.of()).get(8).key()).isNotEqualTo(a.get(8).key());
    }

    @Test
    void substitutionFollowsDockersQuotingRules() {
        Map<String, String> vars = Map.of("A", "x", "EMPTY", "");
        assertThat(ShellWords.split("$A ${A}y '$A' \"$A b\" \\$A ${B:-dflt} ${EMPTY:-e} ${EMPTY-e} ${A:+set} ${B+no}",
                vars::get)).containsExactly("x", "xy", "$A", "x b", "$A", "dflt", "e", "", "set", "");
        assertThat(ShellWords.substitute("a  $A", vars::get)).isEqualTo("a  x");
        assertThatThrownBy(() -> ShellWords.split("'open", vars::get)).hasMessageContaining("not closed");
        assertThatThrownBy(() -> ShellWords.split("${A%%x}", vars::get)).hasMessageContaining("only ${NAME}");
    }

    @Test
    void anUnknownOrUnsupportedInstructionIsAnErrorNamingItsLine() {
        assertThatThrownBy(() -> Dockerfile.parse("FROM kosa8/debian\nRUN true\nFROBNICATE x\n", "ctx/Dockerfile"))
                .isInstanceOf(KosaException.class)
                .hasMessageStartingWith("ctx/Dockerfile line 3: unknown instruction FROBNICATE");
        assertThatThrownBy(() -> Dockerfile.parse("FROM kosa8/debian\nEXPOSE 80\n", "Dockerfile"))
                .hasMessageContaining("line 2: EXPOSE is not supported");
        assertThatThrownBy(() -> Dockerfile.parse("FROM a\nFROM b\n", "Dockerfile"))
                .hasMessageContaining("line 2: a second FROM: multi-stage builds are not supported");
        assertThatThrownBy(() -> Dockerfile.parse("RUN true\nFROM a\n", "Dockerfile"))
                .hasMessageContaining("line 1: RUN before FROM");
        assertThatThrownBy(() -> Dockerfile.parse("# just a comment\n", "Dockerfile")).hasMessageContaining("no FROM");
        assertThatThrownBy(() -> Dockerfile.parse("FROM a\nCOPY --from=b /x /y\n", "Dockerfile"))
                .hasMessageContaining("line 2: COPY --from");
        assertThatThrownBy(() -> Dockerfile.parse("FROM a\nRUN --mount=type=cache,target=/x true\n", "Dockerfile"))
                .hasMessageContaining("line 2: RUN --mount is not supported");
        assertThatThrownBy(() -> Dockerfile.parse("FROM a\nRUN <<EOF\necho\nEOF\n", "Dockerfile"))
                .hasMessageContaining("line 2: RUN with a here-document");
        assertThatThrownBy(() -> Dockerfile.parse("# escape=`\nFROM a\n", "Dockerfile"))
                .hasMessageContaining("line 1: escape=`");
        assertThatThrownBy(() -> Dockerfile.parse("FROM a\nCOPY onlyone\n", "Dockerfile"))
                .hasMessageContaining("line 2: COPY needs a source and a destination");
        assertThatThrownBy(() -> Dockerfile.parse("FROM --platform=linux/arm64 a\n", "Dockerfile"))
                .hasMessageContaining("line 1: FROM --platform=linux/arm64");
    }

    @Test
    void addOfAUrlOrAnArchiveIsRefusedAtItsLineRatherThanDoneDifferently() {
        Dockerfile url = Dockerfile.parse("FROM a\nADD https://example.com/x.txt /x\n", "Dockerfile");
        assertThatThrownBy(() -> plan(url, Map.of())).hasMessageContaining("line 2: ADD of a URL");
        Dockerfile tar = Dockerfile.parse("FROM a\nADD app.tar.gz /opt/\n", "Dockerfile");
        assertThatThrownBy(() -> plan(tar, Map.of())).hasMessageContaining("line 2: ADD of an archive");
        Dockerfile copyTar = Dockerfile.parse("FROM a\nCOPY app.tar.gz /opt/\n", "Dockerfile");
        assertThat(((PlannedStep.Copy) plan(copyTar, Map.of()).getFirst()).destination()).isEqualTo("/opt/");
    }

    @Test
    void aNewEntrypointDropsTheBasesCmdButNotOneOfThisFile() {
        Dockerfile d = Dockerfile.parse("FROM a\nENTRYPOINT [\"/e\"]\n", "Dockerfile");
        BuildState s = new BuildState("Dockerfile", d, Map.of());
        s.start(ImageConfig.NONE.withCmd(List.of("base-cmd")));
        s.apply(d.body().getFirst());
        assertThat(s.config().cmd()).isEmpty();
        Dockerfile own = Dockerfile.parse("FROM a\nCMD [\"c\"]\nENTRYPOINT [\"/e\"]\n", "Dockerfile");
        assertThat(plan(own, Map.of()).getLast().config().cmd()).containsExactly("c");
        BuildState unused = new BuildState("Dockerfile", own, Map.of("NOPE", "1"));
        assertThat(unused.unusedBuildArgs()).containsExactly("NOPE");
    }
}
