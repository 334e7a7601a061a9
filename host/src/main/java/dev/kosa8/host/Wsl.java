package dev.kosa8.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

/**
 * Whether this Linux runs under Windows' Subsystem for Linux, and which
 * one. WSL 2 is a real Linux kernel in a Hyper-V machine: kosa8 runs there
 * as on any Linux, with KVM when Windows passes virtualization through
 * (nested virtualization). WSL 1 is no kernel at all, a translation of
 * Linux calls to Windows': no KVM, no namespaces for the jail, no
 * userfaultfd, so no kosa8 (docs/wsl2.md).
 *
 * <p>Told by the kernel's release ({@code /proc/sys/kernel/osrelease}):
 * Microsoft's WSL 2 kernels end in {@code -microsoft-standard-WSL2}, WSL 1
 * reports a Windows build ending in {@code -Microsoft}. A WSL 2 user may boot
 * a kernel of their own, whose release names no Microsoft; WSL still sets
 * {@code WSL_DISTRO_NAME} in every process it starts and registers its
 * handler for Windows programs ({@code WSLInterop} in binfmt_misc), which tell
 * those.
 *
 * @param distribution the WSL distribution's name ({@code WSL_DISTRO_NAME}), empty when not under WSL or unset
 */
public record Wsl(Version version, String distribution, String kernelRelease) {
    public enum Version {
        NONE, WSL1, WSL2
    }

    /** This host's. */
    public static Wsl host() {
        String release;
        try {
            release = Files.readString(Path.of("/proc/sys/kernel/osrelease")).strip();
        } catch (IOException e) {
            release = "";
        }
        return of(release, System.getenv(), Files.exists(Path.of("/proc/sys/fs/binfmt_misc/WSLInterop")));
    }

    /**
     * What {@code release} (the kernel's release), {@code env} (the process's environment) and {@code interop}
     * (whether WSL's handler for Windows programs is registered, {@code /proc/sys/fs/binfmt_misc/WSLInterop}:
     * there under {@code sudo}, ssh and services too, which do not carry {@code WSL_DISTRO_NAME}) say.
     */
    public static Wsl of(String release, Map<String, String> env, boolean interop) {
        String r = release.toLowerCase(Locale.ROOT);
        String distro = env.getOrDefault("WSL_DISTRO_NAME", "");
        Version v;
        if (r.contains("microsoft-standard") || r.contains("wsl2")) {
            v = Version.WSL2;
        } else if (r.endsWith("-microsoft")) {
            v = Version.WSL1;
        } else if (!distro.isEmpty() || interop) {
            v = Version.WSL2; // a kernel of the user's own: WSL 1 always names Microsoft
        } else {
            v = Version.NONE;
        }
        return new Wsl(v, v == Version.NONE ? "" : distro, release);
    }

    public boolean any() {
        return version != Version.NONE;
    }

    /** The distribution as {@code wsl} commands in Windows take it, or a placeholder saying what to put there. */
    public String distributionArgument() {
        return distribution.isEmpty() ? "<distribution>" : distribution.contains(" ") ? '"' + distribution + '"'
                : distribution;
    }

    /** What gives {@code /dev/kvm} to this host when it is missing (on WSL 2: nested virtualization). */
    public String kvmMissingFix() {
        if (version != Version.WSL2) {
            return version == Version.WSL1 ? wsl1Fix() : "enable virtualization in the firmware and load kvm_intel or kvm_amd";
        }
        return "WSL 2 has /dev/kvm only with nested virtualization: it needs Windows 11 and a CPU with "
                + "virtualization enabled in the firmware; in Windows put `nestedVirtualization=true` under "
                + "`[wsl2]` in %UserProfile%\\.wslconfig (the default on Windows 11), then run `wsl --shutdown` "
                + "and open the distribution again (docs/wsl2.md)";
    }

    /** What gives this user {@code /dev/kvm} when it is there but not theirs. */
    public String kvmGroupFix() {
        if (version == Version.NONE) {
            return "sudo usermod -aG kvm $USER, then log in again";
        }
        return "sudo usermod -aG kvm $USER, then in Windows `wsl --terminate " + distributionArgument()
                + "` and open the distribution again (a new login takes the group)";
    }

    /** What to do on WSL 1, where kosa8 cannot run. */
    public String wsl1Fix() {
        return "convert the distribution to WSL 2: in Windows, `wsl --set-version " + distributionArgument()
                + " 2` (docs/wsl2.md)";
    }
}
