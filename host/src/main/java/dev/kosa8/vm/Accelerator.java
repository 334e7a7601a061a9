package dev.kosa8.vm;

import java.util.Locale;

/** How QEMU runs guest code: hardware virtualization (KVM, HVF) or software emulation (TCG). */
public enum Accelerator {
    KVM, HVF, TCG;

    /** The value of QEMU's {@code -accel}. */
    public String qemuName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The CPU model to ask for: everything the accelerator can offer (fact 2: not {@code host}, which fails here under KVM). */
    public String cpuModel() {
        return this == HVF ? "host" : "max";
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
