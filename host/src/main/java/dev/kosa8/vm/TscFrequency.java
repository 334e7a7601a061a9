package dev.kosa8.vm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;

/**
 * The host's TSC frequency, handed to a TCG guest as {@code tsc_early_khz=},
 * and {@code tsc=reliable} with it. Measured here (docs/image.md): without the
 * frequency about one TCG boot in four hangs in the guest kernel's timer
 * set-up ("tsc: Unable to calibrate against PIT"), more on a loaded host; with
 * it 32 of 32 boots came up. Under TCG the guest reads the host's TSC, so the
 * host's frequency is the right value, and every vCPU reads the same counter.
 * The kernel cannot know that: TCG's CPU is an AMD one without
 * {@code constant_tsc}, and a non-Intel machine with two CPUs has its TSC
 * marked unstable ("TSCs unsynchronized"), leaving the clock to jiffies,
 * which lose every tick TCG delivers late: on the loaded host a guest's
 * 10 s took 19.8 s of the host's. {@code tsc=reliable} keeps the TSC as the
 * clock.
 */
public final class TscFrequency {
    private TscFrequency() {
    }

    public static OptionalLong hostKhz() {
        return fromCpuinfo(Path.of("/proc/cpuinfo"));
    }

    static OptionalLong fromCpuinfo(Path cpuinfo) {
        try {
            String text = Files.readString(cpuinfo);
            if (!text.contains("constant_tsc")) {
                return OptionalLong.empty();
            }
            for (String line : text.lines().toList()) {
                if (line.startsWith("cpu MHz")) {
                    double mhz = Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
                    return mhz > 0 ? OptionalLong.of(Math.round(mhz * 1000)) : OptionalLong.empty();
                }
            }
        } catch (IOException | RuntimeException e) {
            // unknown: the guest calibrates by itself
        }
        return OptionalLong.empty();
    }

    /** The kernel arguments for a guest under {@code accel} (each with a leading space), or an empty string. */
    public static String kernelArg(Accelerator accel) {
        if (accel != Accelerator.TCG) {
            return "";
        }
        OptionalLong khz = hostKhz();
        return (khz.isPresent() ? " tsc_early_khz=" + khz.getAsLong() : "") + " tsc=reliable";
    }
}
