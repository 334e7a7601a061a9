package dev.kosa8.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.kosa8.host.KosaException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** The classifier of held paths: properties over generated paths, and the data file's format. */
class HeldPolicyTest {
    private static final HeldPolicy POLICY = HeldPolicy.defaults();
    /** Names the patterns use, some in other cases, and plain ones. */
    private static final List<String> VOCABULARY = List.of(".git", ".GIT", "hooks", "Hooks", "config", "config.lock",
            "HEAD", "head", "modules", "info", "attributes", "worktrees", "wt", "x.git", ".github", "workflows",
            ".vscode", "tasks.json", ".envrc", ".claude", "settings.json", ".mcp.json", ".config", "mise", "src",
            "a", "b", "objects", "refs", "index", "main.c", "node_modules", "NODE_MODULES", "Node_Modules", "lib",
            ".husky", "pre-commit", ".travis.yml");

    @Provide
    Arbitrary<List<String>> paths() {
        return Arbitraries.of(VOCABULARY).list().ofMinSize(1).ofMaxSize(7);
    }

    @Provide
    Arbitrary<List<String>> plainPaths() {
        return Arbitraries.strings().withCharRange('a', 'z').ofMinLength(1).ofMaxLength(6)
                .map(s -> s + "_1").list().ofMinSize(1).ofMaxSize(8);
    }

    private static String join(List<String> names) {
        return String.join("/", names);
    }

    @Property
    void hooksOfEveryRepositoryAtAnyDepthAreHeldWhateverTheCase(@ForAll("plainPaths") List<String> above,
                                                                 @ForAll("plainPaths") List<String> below,
                                                                 @ForAll boolean upper) {
        String git = upper ? ".GiT" : ".git";
        String hooks = upper ? "HOOKS" : "hooks";
        String unit = join(above) + "/" + git + "/" + hooks;
        HeldPolicy.Match m = POLICY.classify(unit + "/" + join(below), false);
        assertThat(m).isEqualTo(new HeldPolicy.Match(unit, "git"));
    }

    @Property
    void pathsOfPlainNamesAreNeverHeld(@ForAll("plainPaths") List<String> names, @ForAll boolean directory) {
        assertThat(POLICY.classify(join(names), directory)).isNull();
    }

    @Property
    void aUnitIsAPrefixOfItsPathAndEverythingUnderAUnitIsInThatUnit(@ForAll("paths") List<String> names,
                                                                     @ForAll("plainPaths") List<String> below) {
        String path = join(names);
        HeldPolicy.Match m = POLICY.classify(path, false);
        if (m == null) {
            return;
        }
        assertThat(path.equals(m.unit()) || path.startsWith(m.unit() + "/")).isTrue();
        assertThat(POLICY.classify(m.unit() + "/" + join(below), true)).isIn(m, null);
        if (!m.unit().equals(path)) {
            // a unit that has names beneath it is a directory, and still the unit
            assertThat(POLICY.classify(m.unit() + "/" + join(below), false)).isEqualTo(m);
        }
    }

    @Property
    void caseNeverChangesWhatIsHeld(@ForAll("paths") List<String> names, @ForAll boolean directory) {
        String path = join(names);
        HeldPolicy.Match lower = POLICY.classify(path.toLowerCase(java.util.Locale.ROOT), directory);
        HeldPolicy.Match upper = POLICY.classify(path.toUpperCase(java.util.Locale.ROOT), directory);
        HeldPolicy.Match asIs = POLICY.classify(path, directory);
        assertThat(lower == null).isEqualTo(asIs == null);
        assertThat(upper == null).isEqualTo(asIs == null);
        if (asIs != null) {
            assertThat(lower.unit()).isEqualToIgnoringCase(asIs.unit());
            assertThat(upper.className()).isEqualTo(asIs.className());
        }
    }

    /**
     * What a directory move may change: moving the directory {@code from} (not itself held) to {@code to}, anywhere,
     * changes whether a path beneath it is held, or its unit or class, only if the policy guards that move, so that
     * {@link HeldMoves} refuses it.
     */
    @Property
    void aDirectoryMoveThatChangesWhatIsHeldBeneathIsAlwaysGuarded(@ForAll("paths") List<String> fromNames,
                                                                    @ForAll("paths") List<String> toNames,
                                                                    @ForAll("paths") List<String> below) {
        String from = join(fromNames);
        String to = join(toNames);
        if (from.equals(to) || to.startsWith(from + "/") || from.startsWith(to + "/")) {
            return; // into itself, or onto an ancestor: refused by the kernel
        }
        if (POLICY.classify(from, true) != null || POLICY.classify(to, true) != null) {
            return; // the directory itself is in a unit: a move across the layer's edge, refused on its own
        }
        String rest = join(below);
        HeldPolicy.Match before = POLICY.classify(from + "/" + rest, false);
        HeldPolicy.Match after = POLICY.classify(to + "/" + rest, false);
        boolean same = before == null ? after == null
                : after != null && before.className().equals(after.className())
                        && before.unit().substring(from.length()).equals(after.unit().substring(to.length()));
        if (!same) {
            assertThat(POLICY.guards(from, to)).as("moving %s to %s changes %s -> %s", from, to, before, after)
                    .isTrue();
        }
    }

    @Provide
    Arbitrary<String> name() {
        return Arbitraries.of(VOCABULARY);
    }

    @Property
    void aTargetOfLeadingDotDotsThenNamesEscapesExactlyWhenItClimbsAboveTheRoot(
            @ForAll @IntRange(max = 6) int depth, @ForAll @IntRange(max = 8) int up,
            @ForAll("plainPaths") List<String> names) {
        String link = "d/".repeat(depth) + "l";
        String target = "../".repeat(up) + join(names);
        assertThat(HeldPolicy.escapes(link, target)).isEqualTo(up > depth);
    }

    @Property
    void aTargetThatDoesNotEscapeStaysInsideWhenResolvedAsWritten(@ForAll("targets") String target,
                                                                  @ForAll @IntRange(max = 5) int depth) {
        String link = "d/".repeat(depth) + "l";
        if (HeldPolicy.escapes(link, target)) {
            return;
        }
        int level = depth;
        for (String part : target.split("/")) {
            if (part.equals("..")) {
                level--;
            } else if (!part.isEmpty() && !part.equals(".")) {
                level++;
            }
            assertThat(level).as("%s from depth %d", target, depth).isGreaterThanOrEqualTo(0);
        }
    }

    @Provide
    Arbitrary<String> targets() {
        Arbitrary<String> part = Arbitraries.of("..", ".", "a", "b", "", "/");
        return part.list().ofMinSize(1).ofMaxSize(8).map(l -> String.join("/", l).replace("///", "/"));
    }

    @Property
    void absoluteTargetsAndDotDotAfterANameAlwaysEscape(@ForAll("plainPaths") List<String> names) {
        assertThat(HeldPolicy.escapes(join(names), "/" + join(names))).isTrue();
        assertThat(HeldPolicy.escapes("a/b/c/l", names.getFirst() + "/..")).isTrue();
    }

    @Test
    void theDefaultClassesEachSayWhatTheyProtectAgainst() {
        assertThat(POLICY.classes()).extracting(HeldPolicy.HeldClass::name)
                .containsExactly("git", "hook-managers", "direnv", "editors", "agents", "ci");
        assertThat(POLICY.classes()).allSatisfy(c -> assertThat(c.protects()).isNotBlank());
        assertThat(POLICY.protects(HeldPolicy.SYMLINKS)).contains("symlink");
    }

    @Test
    void theIssuesPathsAreHeldAndOrdinaryWorkIsNot() {
        for (String held : List.of(".git/config", ".git/hooks/pre-commit", "sub/.git/config",
                ".git/modules/lib/hooks/post-checkout", ".git/modules/a/b/config", "srv/repo.git/hooks/update",
                ".envrc", "a/.envrc", ".vscode/tasks.json", ".idea/workspace.xml", ".devcontainer/devcontainer.json",
                ".claude/settings.json", ".mcp.json", ".github/workflows/ci.yml", ".gitlab-ci.yml", ".husky/pre-commit",
                "stash/HEAD", ".git/info/attributes", "mise.toml", ".nvim.lua")) {
            assertThat(POLICY.classify(held, false)).as(held).isNotNull();
        }
        for (String free : List.of(".git/index", ".git/HEAD", ".git/objects/ab/cdef", ".git/refs/heads/main",
                ".git/logs/HEAD", ".git/packed-refs", ".gitattributes", ".gitignore", "src/main.c",
                "node_modules/.bin/x", "target/classes/A.class", ".github/CODEOWNERS", "README.md", "Makefile",
                ".git/modules/lib/HEAD", ".git/modules/lib/objects/x")) {
            assertThat(POLICY.classify(free, false)).as(free).isNull();
        }
        assertThat(POLICY.classify("wt/.git", false)).isEqualTo(new HeldPolicy.Match("wt/.git", "git", true));
        assertThat(POLICY.classify("wt/.git", true)).isNull();
    }

    /** What real packages carry (an npm install's node_modules): their CI files are not held; every other class is. */
    @Test
    void aPackagesOwnCiFilesUnderNodeModulesAreNotHeldButEveryOtherClassIs() {
        for (String free : List.of("node_modules/fast-uri/.github/workflows/ci.yml", "node_modules/events/.travis.yml",
                "node_modules/a/node_modules/b/.gitlab-ci.yml", "app/Node_Modules/x/.circleci/config.yml",
                "node_modules/.github/workflows/x.yml")) {
            assertThat(POLICY.classify(free, false)).as(free).isNull();
        }
        for (String held : List.of("node_modules/x/.git/hooks/post-checkout", "node_modules/x/.git/config",
                "node_modules/x/.claude/settings.json", "node_modules/x/.mcp.json", "node_modules/stash/HEAD",
                "node_modules/x/.vscode/tasks.json", "node_modules/x/.husky/pre-commit", "node_modules/x/.envrc",
                "node_modules/x/.dir-locals.el", ".github/workflows/node_modules/x.yml")) {
            assertThat(POLICY.classify(held, false)).as(held).isNotNull();
        }
        // npm renames packages within node_modules (retiring an old version): no refusal; out of it, refused
        assertThat(POLICY.guards("node_modules/fast-uri", "node_modules/.fast-uri-1a2b3c")).isFalse();
        assertThat(POLICY.guards("app/node_modules/x", "app/node_modules/y/node_modules/x")).isFalse();
        assertThat(POLICY.guards("node_modules/fast-uri", "fast-uri")).isTrue();
        assertThat(POLICY.guards("vendor", "node_modules")).isTrue();
    }

    /** A symlink into node_modules from outside it would show a package's files as a project's own: held. */
    @Test
    void aLinkIntoNodeModulesFromOutsideIsHeldAndOneWithinIsNot() {
        assertThat(POLICY.holdsLink("tools", "node_modules/p")).isTrue();
        assertThat(POLICY.holdsLink("a/tools", "../Node_Modules/p/.github")).isTrue();
        assertThat(POLICY.holdsLink("nm", "node_modules")).isTrue();
        // a pattern's own unless-under adds no link rule: git-annex links every annexed file into .git/annex
        assertThat(POLICY.holdsLink("data/f.bin", "../.git/annex/objects/Xx/Yy/SHA256E-s1--ab/SHA256E-s1--ab"))
                .isFalse();
        assertThat(POLICY.holdsLink("head", ".git/HEAD")).isFalse();
        assertThat(POLICY.holdsLink("node_modules/.bin/semver", "../semver/bin/semver.js")).isFalse();
        assertThat(POLICY.holdsLink("node_modules/x", ".pnpm/x@1.0.0/node_modules/x")).isFalse();
        assertThat(POLICY.holdsLink("src/link", "../lib/a.js")).isFalse();
        assertThat(POLICY.holdsLink("key", "/root/.ssh/id_rsa")).isTrue();
        assertThat(HeldPolicy.of(null, List.of(), List.of("symlinks")).holdsLink("tools", "node_modules/p")).isFalse();
    }

    @Test
    void aClassLevelUnlessUnderQualifiesEveryPatternOfItsClassOnly() {
        List<HeldPolicy.HeldClass> parsed = HeldPathsFile.parse("""
                class mine
                protects my tool
                unless-under vendor third_party
                hold **/.mytool
                hold **/mytool.yml unless-under build
                class other
                protects another
                hold **/.other
                """, "f");
        assertThat(parsed.get(0).patterns()).extracting(HeldPolicy.Pattern::unlessUnder)
                .containsExactly(List.of("vendor", "third_party"), List.of("vendor", "third_party", "build"));
        assertThat(parsed.get(1).patterns().getFirst().unlessUnder()).isEmpty();
        assertThatThrownBy(() -> HeldPathsFile.parse("class x\nprotects y\nhold a\nunless-under v\n", "mine"))
                .hasMessageContaining("line 4").hasMessageContaining("before its first");
        assertThatThrownBy(() -> HeldPathsFile.parse("class x\nunless-under v\nprotects y\nhold a\n", "mine"))
                .hasMessageContaining("line 2").hasMessageContaining("after its \"protects\"");
        assertThatThrownBy(() -> HeldPathsFile.parse("unless-under v\n", "mine"))
                .hasMessageContaining("line 1").hasMessageContaining("before any \"class\"");
        assertThatThrownBy(() -> HeldPathsFile.parse("class x\nprotects y\nunless-under a/b\nhold a\n", "mine"))
                .hasMessageContaining("line 3").hasMessageContaining("without '/'");
    }

    @Test
    void classesTurnedOffAreNotHeldAndUnknownClassesAreNamed() {
        HeldPolicy p = HeldPolicy.of(null, List.of(), List.of("direnv", "symlinks"));
        assertThat(p.classify(".envrc", false)).isNull();
        assertThat(p.classify(".git/config", false)).isNotNull();
        assertThat(p.holdsSymlinks()).isFalse();
        assertThatThrownBy(() -> HeldPolicy.of(null, List.of("gti"), List.of()))
                .isInstanceOf(KosaException.class).hasMessageContaining("no class of held paths is named gti")
                .satisfies(e -> assertThat(((KosaException) e).suggestion()).contains("git", "symlinks"));
    }

    @Test
    void aMistakeInTheFormatNamesItsLine() {
        assertThatThrownBy(() -> HeldPathsFile.parse("class x\nprotects y\nhold a/**\n", "mine"))
                .hasMessageContaining("mine, line 3");
        assertThatThrownBy(() -> HeldPathsFile.parse("hold a\n", "mine")).hasMessageContaining("line 1");
        assertThatThrownBy(() -> HeldPathsFile.parse("class x\nhold a\n", "mine")).hasMessageContaining("protects");
        assertThat(HeldPathsFile.parse("class mine\nprotects my tool\nhold **/.mytool\n", "f"))
                .singleElement().satisfies(c -> assertThat(Set.of(c.name())).containsExactly("mine"));
    }
}
