package dev.kosa8.host;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * What {@code kosa8 doctor} finds missing on this host and the lines that
 * install it: each {@link HostRequirement} whose program is not on the
 * PATH, and Java when it is older than 25, with the package names and
 * install command of the host's {@link Distribution} (every distribution's,
 * when it is not one kosa8 knows). A pure function of its inputs, so tests
 * give it any os-release and any set of programs.
 */
public record HostCheck(OsRelease os, Distribution distribution, List<HostRequirement> missing,
                        List<HostRequirement> missingOptional, boolean javaMissing) {

    public static HostCheck of(OsRelease os, Predicate<String> present, int javaFeature) {
        List<HostRequirement> missing = new ArrayList<>();
        List<HostRequirement> optional = new ArrayList<>();
        for (HostRequirement r : HostRequirement.ALL) {
            if (!present.test(r.program())) {
                (r.optional() ? optional : missing).add(r);
            }
        }
        return new HostCheck(os, Distribution.of(os), missing, optional, javaFeature < 25);
    }

    /** This host, as the PATH and the running JVM find it. */
    public static HostCheck host() {
        return of(OsRelease.host(), p -> HostTools.which(p) != null, Runtime.version().feature());
    }

    /** The packages of what is missing on {@code d}, each once, Java's first; optional ones too when asked. */
    public List<String> packages(Distribution d, boolean withOptional) {
        Set<String> out = new LinkedHashSet<>();
        if (javaMissing) {
            out.add(HostRequirement.javaPackage(d));
        }
        missing.forEach(r -> out.add(r.packageOn(d)));
        if (withOptional) {
            missingOptional.forEach(r -> out.add(r.packageOn(d)));
        }
        return List.copyOf(out);
    }

    /**
     * The install lines to print: this distribution's, or every known
     * distribution's (labelled) when it is unknown; none when nothing is
     * missing.
     */
    public List<String> installLines(boolean withOptional) {
        List<String> out = new ArrayList<>();
        List<Distribution> ds = distribution == Distribution.UNKNOWN
                ? List.of(Distribution.DEBIAN, Distribution.FEDORA, Distribution.ARCH, Distribution.OPENSUSE,
                Distribution.NIXOS)
                : List.of(distribution);
        for (Distribution d : ds) {
            List<String> p = packages(d, withOptional);
            if (!p.isEmpty()) {
                out.add((ds.size() > 1 ? d.display() + ": " : "") + d.installLine(p));
            }
        }
        return out;
    }
}
