package dev.kosa8;

import static org.assertj.core.api.Assertions.assertThat;

import dev.kosa8.host.HostTools;
import dev.kosa8.host.KosaException;
import dev.kosa8.net.HostName;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.constantpool.ClassEntry;
import java.lang.classfile.constantpool.PoolEntry;
import java.lang.classfile.constantpool.Utf8Entry;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The host module's packages use each other only as the layer table of
 * docs/design.md ("Dependencies") allows, and never in a cycle. {@link #TABLE}
 * is that table; a package with no row in it fails, so a new package is placed
 * in the layers when it is added.
 *
 * <p>It reads the compiled classes ({@code host/target/classes}), not the
 * sources: each class file's constant pool names every class its code uses
 * (calls, fields, casts, catches, nested classes) and holds the descriptors and
 * generic signatures that name the rest. The one use it cannot see is a
 * constant javac inlines (a {@code static final} string or number read from
 * another class), which leaves no trace in the class file; nor does an import
 * that nothing uses, which is no dependency.
 *
 * <p>Why the JDK's {@code java.lang.classfile} rather than ArchUnit: the
 * rules need nothing but the class names in each constant pool; the JDK reads
 * its own class-file version on the day it ships, where a library that parses
 * class files must catch up with every new one; and it adds no dependency to
 * the build. It reads the module's 400-odd classes once, in about a second.
 */
class PackageDependenciesTest {
    private static final String ROOT = "dev.kosa8.";
    private static final List<String> FEATURES =
            List.of("workspace", "secrets", "egress", "egress.tls", "image", "image.oci", "image.debian",
                    "checkpoint", "checkpoint.ram", "ports", "processes", "files", "e2b");

    /**
     * One row of the layer table: packages (under {@code dev.kosa8}) that share
     * it, such as a feature and its subpackage, which may use each other, and
     * the packages they may use.
     */
    record Row(List<String> packages, List<String> mayUse) {
        boolean allows(String to) {
            return packages.contains(to) || mayUse.contains(to);
        }
    }

    /** The layer table of docs/design.md, "Dependencies", bottom first. */
    static final List<Row> TABLE = List.of(
            new Row(List.of("protocol"), List.of()),
            new Row(List.of("host"), List.of("protocol")),
            new Row(List.of("net"), List.of()),
            new Row(List.of("client"), List.of("protocol")),
            new Row(List.of("vm"), List.of("host", "protocol")),
            new Row(List.of("workspace"), List.of("host", "protocol")),
            new Row(List.of("secrets"), List.of("host", "net")),
            new Row(List.of("egress", "egress.tls"), List.of("secrets", "vm", "host", "net", "protocol")),
            new Row(List.of("image", "image.oci", "image.debian"), List.of("vm", "host")), // the builder VM
            new Row(List.of("agents"), List.of("secrets", "host")),
            new Row(List.of("checkpoint", "checkpoint.ram"), List.of("workspace", "vm", "host", "protocol")),
            new Row(List.of("ports"), List.of("vm", "host", "protocol")),
            new Row(List.of("processes"), List.of("host", "protocol")),
            new Row(List.of("files"), List.of("host", "protocol")),
            new Row(List.of("mcp"), List.of("host")),
            new Row(List.of("e2b"), List.of("processes", "files", "host", "protocol")),
            new Row(List.of("daemon"), concat(FEATURES, "vm", "host", "net", "protocol")),
            new Row(List.of("cli"), concat(FEATURES, "agents", "mcp", "daemon", "client", "vm", "host", "net",
                    "protocol")));

    /** Rows of packages in other modules: they are named as targets only, and have no classes here. */
    private static final Set<String> OTHER_MODULES = Set.of("protocol", "client");

    /** One class's use of another, both by their binary names ({@code dev.kosa8.egress.UpstreamSlot$Idle}). */
    record Dependency(String from, String to) {
        @Override
        public String toString() {
            return from + " uses " + to;
        }
    }

    /** The classes of a module and their uses of {@code dev.kosa8} classes in other packages. */
    record Classes(Set<String> names, List<Dependency> dependencies) {
    }

    @Test
    void everyPackageHasARowInTheLayerTable() {
        assertNone(withoutRow(hostClasses(), TABLE));
    }

    @Test
    void everyDependencyIsOneTheLayerTableAllows() {
        assertNone(againstTable(hostClasses().dependencies(), TABLE));
    }

    @Test
    void noPackagesUseEachOtherInACycle() {
        assertNone(cycles(hostClasses().dependencies()));
    }

    @Test
    void everyRowOfTheTableNamesAPackageThatHasClasses() {
        Set<String> packages = new TreeSet<>();
        hostClasses().names().forEach(c -> packages.add(shortName(packageOf(c))));
        for (Row row : TABLE) {
            for (String p : row.packages()) {
                if (!OTHER_MODULES.contains(p)) {
                    assertThat(packages).as("classes of %s%s: a row for a package that is gone goes from the table"
                            + " and from docs/design.md, \"Dependencies\"", ROOT, p).contains(p);
                }
            }
        }
    }

    @Test
    void aUseOfAFeatureAboveIsReportedWithTheClassAndWhatItUses() {
        var uses = List.of(new Dependency("dev.kosa8.secrets.SecretSpec", "dev.kosa8.egress.HostName"),
                new Dependency("dev.kosa8.egress.SecretBindings", "dev.kosa8.secrets.KeyScrubber"));

        assertThat(againstTable(uses, TABLE)).containsExactly("dev.kosa8.secrets.SecretSpec uses "
                + "dev.kosa8.egress.HostName, but dev.kosa8.secrets may use only host, net (docs/design.md, "
                + "\"Dependencies\"): move what both need below them, or turn the dependency around");
    }

    @Test
    void aPackageWithoutARowIsToldToAddOneWhetherItUsesOrIsUsed() {
        var classes = new Classes(Set.of("dev.kosa8.sync.Mirror", "dev.kosa8.sync.Peer", "dev.kosa8.host.HostPaths"),
                List.of(new Dependency("dev.kosa8.daemon.SandboxManager", "dev.kosa8.sync.Mirror")));

        assertThat(withoutRow(classes, TABLE)).containsExactly("package dev.kosa8.sync (dev.kosa8.sync.Mirror and"
                + " 1 more) has no row in the layer table: add one to PackageDependenciesTest.TABLE and to"
                + " docs/design.md, \"Dependencies\", with the package's job and what it may use");
        assertThat(againstTable(classes.dependencies(), TABLE)).containsExactly("dev.kosa8.daemon.SandboxManager"
                + " uses dev.kosa8.sync.Mirror, whose package has no row in the layer table: add one to"
                + " PackageDependenciesTest.TABLE and to docs/design.md, \"Dependencies\"");
    }

    @Test
    void aCycleTheTableAllowsIsStillACycle() {
        var uses = List.of(new Dependency("dev.kosa8.egress.Broker", "dev.kosa8.egress.tls.SandboxCa"),
                new Dependency("dev.kosa8.egress.tls.UpstreamTls", "dev.kosa8.egress.HostPattern"),
                new Dependency("dev.kosa8.egress.tls.UpstreamTls", "dev.kosa8.host.KosaException"));

        assertThat(againstTable(uses, TABLE)).isEmpty();
        assertThat(cycles(uses)).containsExactly("a cycle between dev.kosa8.egress, dev.kosa8.egress.tls:"
                + " dev.kosa8.egress.Broker uses dev.kosa8.egress.tls.SandboxCa;"
                + " dev.kosa8.egress.tls.UpstreamTls uses dev.kosa8.egress.HostPattern."
                + " Move what they share below them, or turn a dependency around (docs/design.md, \"Dependencies\")");
    }

    /**
     * Names {@link HostName} in a generic signature only, {@link KosaException}
     * in a method descriptor only and {@link HostTools} by a call only.
     */
    @SuppressWarnings("unused")
    static final class Fixture {
        List<HostName> names;

        void fail(KosaException e) {
        }

        int tools() {
            return HostTools.which("true").length();
        }
    }

    @Test
    void theReaderSeesClassesUsedInCallsDescriptorsAndSignatures() throws IOException {
        byte[] bytes;
        try (InputStream in = Fixture.class.getResourceAsStream("PackageDependenciesTest$Fixture.class")) {
            bytes = in.readAllBytes();
        }
        List<Dependency> uses = new ArrayList<>();
        String name = read(bytes, uses);

        assertThat(name).isEqualTo(Fixture.class.getName());
        assertThat(uses).extracting(Dependency::to).containsExactlyInAnyOrder(HostName.class.getName(),
                KosaException.class.getName(), HostTools.class.getName());
    }

    private static Classes scanned;

    /** The host module's classes, read once for the tests that need them. */
    private static synchronized Classes hostClasses() {
        if (scanned == null) {
            scanned = scan();
        }
        return scanned;
    }

    private static Classes scan() {
        Path classes;
        try {
            classes = Path.of(KosaException.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        assertThat(classes).as("the host module's compiled classes, a folder when run by surefire").isDirectory();
        Set<String> names = new TreeSet<>();
        List<Dependency> uses = new ArrayList<>();
        try (Stream<Path> files = Files.walk(classes.resolve("dev/kosa8"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".class")).sorted().toList()) {
                names.add(read(Files.readAllBytes(f), uses));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Classes(names, uses);
    }

    /** Class names in descriptors ({@code Ldev/kosa8/x/Y;}) and signatures ({@code Ldev/kosa8/x/Y<...}). */
    private static final Pattern NAMED = Pattern.compile("L(dev/kosa8/[^;<]+)[;<]");

    /** Adds to {@code uses} the class's uses of {@code dev.kosa8} classes in other packages; returns its name. */
    static String read(byte[] classFile, List<Dependency> uses) {
        ClassModel model = ClassFile.of().parse(classFile);
        String self = model.thisClass().asInternalName().replace('/', '.');
        Set<String> targets = new TreeSet<>();
        for (PoolEntry e : model.constantPool()) {
            if (e instanceof ClassEntry c && c.asInternalName().startsWith("dev/kosa8/")) {
                targets.add(c.asInternalName());
            } else if (e instanceof Utf8Entry u) {
                Matcher m = NAMED.matcher(u.stringValue());
                while (m.find()) {
                    targets.add(m.group(1));
                }
            }
        }
        for (String t : targets) {
            String to = t.replace('/', '.');
            if (!packageOf(to).equals(packageOf(self))) {
                uses.add(new Dependency(self, to));
            }
        }
        return self;
    }

    /** One line per package of {@code classes} that has no row in {@code table}. */
    static List<String> withoutRow(Classes classes, List<Row> table) {
        Map<String, List<String>> unplaced = new TreeMap<>();
        for (String c : new TreeSet<>(classes.names())) {
            if (rowOf(table, packageOf(c)) == null) {
                unplaced.computeIfAbsent(packageOf(c), p -> new ArrayList<>()).add(c);
            }
        }
        List<String> problems = new ArrayList<>();
        unplaced.forEach((p, cs) -> problems.add("package " + p + " (" + cs.getFirst()
                + (cs.size() > 1 ? " and " + (cs.size() - 1) + " more" : "") + ") has no row in the layer table:"
                + " add one to PackageDependenciesTest.TABLE and to docs/design.md, \"Dependencies\", with the"
                + " package's job and what it may use"));
        return problems;
    }

    /** One line per dependency that {@code table} does not allow. */
    static List<String> againstTable(List<Dependency> uses, List<Row> table) {
        List<String> problems = new ArrayList<>();
        for (Dependency d : uses) {
            Row from = rowOf(table, packageOf(d.from()));
            if (from == null) {
                continue; // withoutRow names the package
            }
            if (rowOf(table, packageOf(d.to())) == null) {
                problems.add(d + ", whose package has no row in the layer table: add one to"
                        + " PackageDependenciesTest.TABLE and to docs/design.md, \"Dependencies\"");
            } else if (!from.allows(shortName(packageOf(d.to())))) {
                problems.add(d + ", but " + packageOf(d.from()) + " may use only "
                        + (from.mayUse().isEmpty() ? "itself" : String.join(", ", from.mayUse()))
                        + " (docs/design.md, \"Dependencies\"): move what both need below them, or turn the"
                        + " dependency around");
            }
        }
        return problems;
    }

    /**
     * One line per set of packages that reach each other through their uses
     * (a strongly connected component of more than one), naming for each use
     * between them the first class that makes it.
     */
    static List<String> cycles(List<Dependency> uses) {
        Map<String, Map<String, Dependency>> edges = new TreeMap<>();
        for (Dependency d : uses) {
            edges.computeIfAbsent(packageOf(d.from()), p -> new TreeMap<>()).putIfAbsent(packageOf(d.to()), d);
        }
        Map<String, Set<String>> reach = new TreeMap<>();
        for (String p : edges.keySet()) {
            reach.put(p, reachable(p, edges));
        }
        List<String> problems = new ArrayList<>();
        Set<String> reported = new HashSet<>();
        for (String p : reach.keySet()) {
            Set<String> component = new TreeSet<>();
            for (String q : reach.get(p)) {
                if (reach.getOrDefault(q, Set.of()).contains(p)) {
                    component.add(q);
                }
            }
            if (component.size() < 2 || !reported.addAll(component)) {
                continue;
            }
            List<String> links = new ArrayList<>();
            for (String from : component) {
                edges.get(from).forEach((to, d) -> {
                    if (component.contains(to)) {
                        links.add(d.toString());
                    }
                });
            }
            problems.add("a cycle between " + String.join(", ", component) + ": " + String.join("; ", links)
                    + ". Move what they share below them, or turn a dependency around (docs/design.md,"
                    + " \"Dependencies\")");
        }
        return problems;
    }

    /** The packages {@code start} reaches through one or more uses, itself included only through a cycle. */
    private static Set<String> reachable(String start, Map<String, Map<String, Dependency>> edges) {
        Set<String> seen = new TreeSet<>();
        List<String> todo = new ArrayList<>(edges.getOrDefault(start, Map.of()).keySet());
        while (!todo.isEmpty()) {
            String p = todo.removeLast();
            if (seen.add(p)) {
                todo.addAll(edges.getOrDefault(p, Map.of()).keySet());
            }
        }
        return seen;
    }

    private static Row rowOf(List<Row> table, String pkg) {
        if (!pkg.startsWith(ROOT)) {
            return null;
        }
        String name = shortName(pkg);
        return table.stream().filter(r -> r.packages().contains(name)).findFirst().orElse(null);
    }

    /** {@code dev.kosa8.egress.tls} for {@code dev.kosa8.egress.tls.SandboxCa} and its nested classes. */
    private static String packageOf(String className) {
        return className.substring(0, Math.max(0, className.lastIndexOf('.')));
    }

    private static String shortName(String pkg) {
        return pkg.startsWith(ROOT) ? pkg.substring(ROOT.length()) : pkg;
    }

    private static List<String> concat(List<String> first, String... more) {
        List<String> all = new ArrayList<>(first);
        all.addAll(List.of(more));
        return List.copyOf(all);
    }

    private static void assertNone(List<String> problems) {
        assertThat(problems).withFailMessage(() -> problems.size() + " problem(s):\n" + String.join("\n", problems))
                .isEmpty();
    }
}
