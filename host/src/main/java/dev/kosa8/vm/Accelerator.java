package dev.kosa8.vm;

import java.util.Locale;

/** How QEMU runs guest code: hardware virtualization (KVM, HVF) or software emulation (TCG). */
public enum Accelerator {
    KVM, HVF, TCG;

    /** The value of QEMU's {@code -accel}. */
    public String qemuName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The CPU model to ask for: everything the accelerator can offer (fact 2:
     * not {@code host}, which fails here under KVM). Under TCG without
     * ERMS and FSRM ("fast" {@code rep movsb/stosb}): with them the guest
     * kernel and glibc copy and clear memory with {@code rep movsb/stosb},
     * which TCG emulates a byte per step; without them they use 8-byte
     * moves. Measured in one guest per model (docs/image.md, "CPU model
     * under TCG"): clearing memory 4.2x, a 1 MiB socket copy 5.2x, the
     * workspace's sequential reads and writes about 2x faster. Hardware
     * accelerators keep the host CPU's own string instructions.
     */
    public String cpuModel() {
        return switch (this) {
            case HVF -> "host";
            case KVM -> "max";
            case TCG -> "max,-erms,-fsrm";
        };
    }

    public static Accelerator parse(String s) {
        try {
            return valueOf(s.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new dev.kosa8.host.KosaException(dev.kosa8.host.KosaException.Kind.USAGE,
                    "unknown accelerator '" + s + "'", "use one of: kvm, hvf, tcg, auto");
        }
    }
}
