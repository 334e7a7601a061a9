package dev.kosa8.vm;

import dev.kosa8.host.KosaException;
import java.util.List;
import java.util.Locale;

/**
 * The guest's processor architecture, and everything about the machine that follows from it: the QEMU program,
 * the machine type, the name of its RAM block, the serial console's device in the guest, the CPU model per
 * accelerator and the kernel arguments the machine needs. The rest of kosa8 (devices, sockets, jail, seccomp
 * filter, migration) is the same on both.
 *
 * <ul>
 *   <li>{@link #AMD64}: QEMU's {@code microvm} (see {@link QemuCommandLine}), a PVH {@code vmlinux}, console
 *       {@code ttyS0}; under TCG the TSC arguments of {@link TscFrequency}.</li>
 *   <li>{@link #ARM64}: QEMU's {@code virt}, which has no PCI unless asked and gives up to 32 virtio-mmio
 *       transports found through the device tree (no ACPI, no firmware: {@code -kernel} boots Debian's arm64
 *       {@code Image} directly), console {@code ttyAMA0} (its PL011). Under TCG the CPU is {@code max} without
 *       pointer authentication: emulating its QARMA5 signing costs every function call (Debian's kernel
 *       signs return addresses), and with it a kernel took 12 s to user space here, without it 1.9 s
 *       (docs/arm64.md).</li>
 * </ul>
 */
public enum GuestArch {
    AMD64("amd64", "x86_64", "qemu-system-x86_64", "microvm.ram", "ttyS0"),
    ARM64("arm64", "aarch64", "qemu-system-aarch64", "mach-virt.ram", "ttyAMA0");

    private final String debian;
    private final String uname;
    private final String qemuProgram;
    private final String ramBlock;
    private final String console;

    GuestArch(String debian, String uname, String qemuProgram, String ramBlock, String console) {
        this.debian = debian;
        this.uname = uname;
        this.qemuProgram = qemuProgram;
        this.ramBlock = ramBlock;
        this.console = console;
    }

    /** Debian's name of the architecture ({@code amd64}, {@code arm64}): the archive's, and the CLI's. */
    public String debianName() {
        return debian;
    }

    /** What {@code uname -m} says in the guest. */
    public String unameMachine() {
        return uname;
    }

    /** The QEMU system emulator's program name. */
    public String qemuProgram() {
        return qemuProgram;
    }

    /**
     * The name of the machine's RAM block, which QEMU's migration streams name it by; a file-RAM machine's
     * memory backend takes it, so a state saved by one kind of machine loads into the other.
     */
    public String ramBlock() {
        return ramBlock;
    }

    /** The guest's serial console device, for {@code console=}. */
    public String consoleDevice() {
        return console;
    }

    /** QEMU's {@code -M} value; with {@code memoryBackend}, the machine's RAM is that backend object. */
    public String machine(String memoryBackend) {
        String base = switch (this) {
            case AMD64 -> "microvm,x-option-roms=off,rtc=on";
            // the best interrupt controller the accelerator offers: virt's default GICv2 stops at 8 CPUs (VmSpec
            // allows 64), and a KVM host with a GICv3 alone cannot run it
            case ARM64 -> "virt,gic-version=max";
        };
        return memoryBackend == null ? base : base + ",memory-backend=" + memoryBackend;
    }

    /** The CPU model under {@code accel}. */
    public String cpuModel(Accelerator accel) {
        return switch (this) {
            case AMD64 -> accel.cpuModel();
            case ARM64 -> accel == Accelerator.TCG ? "max,pauth=off" : "host";
        };
    }

    /** The kernel arguments this machine needs under {@code accel}, each with a leading space, or "". */
    public String kernelArgs(Accelerator accel) {
        return this == AMD64 ? TscFrequency.kernelArg(accel) : "";
    }

    /** The architecture this JVM runs on: what sandboxes are unless asked otherwise. */
    public static GuestArch host() {
        return ofJvm(System.getProperty("os.arch", ""));
    }

    /** A JVM {@code os.arch} value's architecture; kosa8 runs on x86-64 and arm64 hosts only. */
    static GuestArch ofJvm(String osArch) {
        return switch (osArch) {
            case "aarch64", "arm64" -> ARM64;
            default -> AMD64;
        };
    }

    /** Whether guests of this architecture run here only by emulation (TCG, whatever the host offers). */
    public boolean foreign() {
        return this != host();
    }

    /**
     * Refuses an architecture kosa8 cannot run on this host yet: an x86-64 guest on an arm64 host, whose image
     * carries a Java runtime jlink'ed from the host's JDK (an arm64 one).
     */
    public GuestArch requireRunnableHere() {
        if (this == AMD64 && foreign()) {
            throw new KosaException(KosaException.Kind.USAGE, "x86-64 guests on an arm64 host are not supported yet"
                    + " (their image's Java is made from this host's JDK, an arm64 one)",
                    "run arm64 guests here (the default), or x86-64 ones on an x86-64 host");
        }
        return this;
    }

    /** The architecture a user named: Debian's names, or {@code uname}'s. */
    public static GuestArch parse(String s) {
        String v = s.trim().toLowerCase(Locale.ROOT);
        for (GuestArch a : values()) {
            if (a.debian.equals(v) || a.uname.equals(v)) {
                return a;
            }
        }
        throw new KosaException(KosaException.Kind.USAGE, "unknown architecture '" + s + "'",
                "use one of: " + String.join(", ", names()));
    }

    /** The names {@link #parse} takes first: Debian's. */
    public static List<String> names() {
        return java.util.Arrays.stream(values()).map(GuestArch::debianName).toList();
    }
}
