package dev.kosa8.host;

import java.util.ArrayList;
import java.util.List;

/**
 * The package manager families {@code kosa8 doctor} knows, found from
 * os-release's {@code ID}, else its {@code ID_LIKE} (so Ubuntu and Mint are
 * Debian, Rocky and Alma are Fedora, Manjaro is Arch), and the line that
 * installs packages on each.
 */
public enum Distribution {
    DEBIAN("Debian/Ubuntu", List.of("debian", "ubuntu")),
    FEDORA("Fedora/RHEL", List.of("fedora", "rhel", "centos")),
    ARCH("Arch", List.of("arch", "archlinux")),
    OPENSUSE("openSUSE", List.of("opensuse", "suse", "opensuse-tumbleweed", "opensuse-leap", "sles")),
    NIXOS("NixOS", List.of("nixos")),
    UNKNOWN("an unknown distribution", List.of());

    private final String display;
    private final List<String> ids;

    Distribution(String display, List<String> ids) {
        this.display = display;
        this.ids = ids;
    }

    public String display() {
        return display;
    }

    public static Distribution of(OsRelease os) {
        List<String> names = new ArrayList<>();
        names.add(os.id());
        names.addAll(os.idLike());
        for (String n : names) {
            for (Distribution d : values()) {
                if (d.ids.contains(n)) {
                    return d;
                }
            }
        }
        return UNKNOWN;
    }

    /** The command that installs {@code packages} here; empty for {@link #UNKNOWN}. */
    public String installLine(List<String> packages) {
        String p = String.join(" ", packages);
        return switch (this) {
            case DEBIAN -> "sudo apt-get install -y --no-install-recommends " + p;
            case FEDORA -> "sudo dnf install -y " + p;
            case ARCH -> "sudo pacman -S --needed " + p;
            case OPENSUSE -> "sudo zypper install -y " + p;
            case NIXOS -> "nix-shell -p " + p + "   (or for good: nix profile install "
                    + String.join(" ", packages.stream().map(x -> "nixpkgs#" + x).toList()) + ")";
            case UNKNOWN -> "";
        };
    }
}
