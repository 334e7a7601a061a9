package dev.kosa8.image.debian;

import dev.kosa8.host.KosaException;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ResolverTest {

    static String pkg(String name, String version, String... fields) {
        StringBuilder b = new StringBuilder("Package: " + name + "\nVersion: " + version
                + "\nArchitecture: amd64\nFilename: pool/main/x/" + name + "_" + version.replaceFirst("^[0-9]+:", "") + "_amd64.deb\nSize: 10\n"
                + "SHA256: " + "ab".repeat(32) + "\n");
        for (String f : fields) {
            b.append(f).append('\n');
        }
        return b.append('\n').toString();
    }

    static List<String> closure(String packages, String... names) {
        return Resolver.closure(PackageIndex.parse(packages, "Packages", "amd64"), List.of(names)).stream()
                .map(PackageEntry::name).toList();
    }

    @Test
    void followsDependsAndPreDependsTransitively() {
        String p = pkg("aa", "1", "Depends: bb, cc (>= 2)") + pkg("bb", "1", "Pre-Depends: dd") + pkg("cc", "2")
                + pkg("dd", "1") + pkg("ee", "1");
        assertThat(closure(p, "aa")).containsExactly("aa", "bb", "cc", "dd");
    }

    @Test
    void aCycleIsFine() {
        String p = pkg("aa", "1", "Depends: bb") + pkg("bb", "1", "Depends: cc") + pkg("cc", "1", "Depends: aa");
        assertThat(closure(p, "aa")).containsExactly("aa", "bb", "cc");
    }

    @Test
    void alternativesTakeTheFirstThatExistsUnlessAnotherIsChosenAnyway() {
        String p = pkg("aa", "1", "Depends: gone | bb | cc") + pkg("bb", "1") + pkg("cc", "1");
        assertThat(closure(p, "aa")).containsExactly("aa", "bb");
        // c is chosen for another reason, so a's "bb | cc" takes it instead of adding b (as apt does)
        String q = pkg("aa", "1", "Depends: bb | cc") + pkg("bb", "1") + pkg("cc", "1") + pkg("zz", "1", "Depends: cc");
        assertThat(closure(q, "aa", "zz")).containsExactly("aa", "cc", "zz");
    }

    @Test
    void versionConstraintsPickAnAlternativeThatSatisfiesThem() {
        String p = pkg("aa", "1", "Depends: bb (>= 2) | cc") + pkg("bb", "1.9") + pkg("cc", "1");
        assertThat(closure(p, "aa")).containsExactly("aa", "cc");
        String q = pkg("aa", "1", "Depends: bb (<< 2:0)") + pkg("bb", "1:5");
        assertThat(closure(q, "aa")).containsExactly("aa", "bb");
    }

    @Test
    void virtualPackagesAreSatisfiedByProviders() {
        String p = pkg("aa", "1", "Depends: mail-transport-agent") + pkg("exim", "4", "Provides: mail-transport-agent",
                "Priority: standard") + pkg("postfix", "3", "Provides: mail-transport-agent", "Priority: optional");
        assertThat(closure(p, "aa")).containsExactly("aa", "exim");
        // a versioned relation needs a versioned Provides
        String q = pkg("aa", "1", "Depends: libfoo (>= 2)") + pkg("foo-old", "1", "Provides: libfoo")
                + pkg("foo-new", "1", "Provides: libfoo (= 2.5)");
        assertThat(closure(q, "aa")).containsExactly("aa", "foo-new");
        // a provider already chosen satisfies it
        String r = pkg("aa", "1", "Depends: mta") + pkg("xx", "1", "Provides: mta") + pkg("yy", "1", "Provides: mta");
        assertThat(closure(r, "aa", "yy")).containsExactly("aa", "yy");
    }

    @Test
    void theNewestVersionOfAPackageIsTaken() {
        String p = pkg("aa", "1", "Depends: bb (>= 2)") + pkg("bb", "2.0~rc1") + pkg("bb", "2.0") + pkg("bb", "1.5");
        var index = PackageIndex.parse(p, "Packages", "amd64");
        assertThat(index.get("bb").orElseThrow().versionText()).isEqualTo("2.0");
        assertThat(closure(p, "aa")).containsExactly("aa", "bb");
    }

    @Test
    void anUnsatisfiableDependencyNamesTheChainThatAskedForIt() {
        String p = pkg("aa", "1", "Depends: bb") + pkg("bb", "1", "Depends: cc (>= 3) | dd");
        assertThatThrownBy(() -> closure(p, "aa")).isInstanceOf(KosaException.class)
                .hasMessageContaining("nothing in the archive's index satisfies cc (>= 3) | dd")
                .hasMessageContaining("bb <- aa <- requested");
        assertThatThrownBy(() -> closure(p, "nosuch")).isInstanceOf(KosaException.class)
                .hasMessageContaining("the package nosuch is not in the archive's index");
    }

    @Test
    void minbaseIsEssentialAndRequiredAndApt() {
        String p = pkg("base-files", "1", "Essential: yes", "Priority: required") + pkg("dpkg", "1", "Essential: yes")
                + pkg("mawk", "1", "Priority: required") + pkg("apt", "1", "Priority: important")
                + pkg("vim", "1", "Priority: standard");
        assertThat(Resolver.minbase(PackageIndex.parse(p, "Packages", "amd64")))
                .containsExactlyInAnyOrder("base-files", "dpkg", "mawk", "apt");
    }

    @Test
    void otherArchitecturesAreLeftOutAndArchQualifiersRead() {
        String p = pkg("aa", "1", "Depends: bb:any, cc") + pkg("bb", "1") + pkg("cc", "1").replace("amd64", "arm64")
                + pkg("cc", "1").replace("Architecture: amd64", "Architecture: all");
        assertThat(closure(p, "aa")).containsExactly("aa", "bb", "cc");
        assertThat(PackageIndex.parse(p, "Packages", "amd64").get("cc").orElseThrow().architecture()).isEqualTo("all");
    }
}
