package dev.kosa8.cli;

import picocli.CommandLine.Option;

/** The shape of a new sandbox, shared by `run` and `create`. */
final class SandboxOptions {
    @Option(names = "--cpus", paramLabel = "N", defaultValue = "2", description = "Virtual CPUs (default: ${DEFAULT-VALUE}).")
    int cpus;

    @Option(names = "--memory", paramLabel = "SIZE", defaultValue = "1G",
            description = "Guest memory, like 512M or 2G (default: ${DEFAULT-VALUE}).")
    String memory;

    @Option(names = "--accel", paramLabel = "ACCEL", defaultValue = "auto",
            description = "kvm, hvf, tcg, or auto: probe once and cache the result (default: ${DEFAULT-VALUE}).")
    String accel;

    String query() {
        String a = accel.equalsIgnoreCase("auto") ? "auto" : dev.kosa8.vm.Accelerator.parse(accel).qemuName();
        return "cpus=" + cpus + "&memoryMiB=" + Sizes.mebibytes(memory) + "&accelerator=" + a;
    }
}
