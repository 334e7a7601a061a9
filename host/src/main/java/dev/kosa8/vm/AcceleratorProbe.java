package dev.kosa8.vm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.kosa8.host.AtomicFile;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Chooses the accelerator by booting the real guest kernel under it, not by
 * looking for {@code /dev/kvm}: on this project's machines {@code /dev/kvm}
 * exists and accepts {@code KVM_CREATE_VM}, yet a stock kernel hangs under it
 * (a paravirtual KVM: the kernel hangs right after decompression). The probe boots the image's kernel and initramfs with
 * {@code kosa8.probe=1}; the init prints {@code KOSA8-PROBE-OK} and exits. No
 * answer within the timeout means the accelerator does not work here, and the
 * next one is tried; TCG always works. The result is cached per QEMU binary,
 * kernel and host, and {@code --accel} overrides all of it.
 */
public final class AcceleratorProbe {
    public static final String MARKER = "KOSA8-PROBE-OK";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String qemu;
    private final Path cacheFile;
    private final Duration timeout;
    private final Consumer<String> warnings;

    public AcceleratorProbe(String qemu, Path cacheFile, Duration timeout, Consumer<String> warnings) {
        this.qemu = qemu;
        this.cacheFile = cacheFile;
        this.timeout = timeout;
        this.warnings = warnings;
    }

    /** A probe's outcome: the choice, and what was tried on the way. */
    public record Choice(Accelerator accelerator, List<String> tried, boolean cached) {
    }

    public Choice choose(Path kernel, Path initramfs) {
        String key = cacheKey(kernel);
        Choice cached = readCache(key);
        if (cached != null) {
            return cached;
        }
        List<String> tried = new ArrayList<>();
        Accelerator chosen = Accelerator.TCG;
        for (Accelerator candidate : candidates()) {
            String outcome = probe(candidate, kernel, initramfs);
            tried.add(candidate.qemuName() + ": " + outcome);
            if (outcome.equals("works")) {
                chosen = candidate;
                break;
            }
        }
        if (chosen == Accelerator.TCG && !tried.isEmpty()) {
            warnings.accept("hardware acceleration is not usable here (" + String.join("; ", tried)
                    + "); sandboxes run under TCG, software emulation, which is much slower");
        }
        Choice c = new Choice(chosen, List.copyOf(tried), false);
        writeCache(key, c);
        return c;
    }

    private static List<Accelerator> candidates() {
        String os = System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT);
        if (os.contains("mac")) {
            return List.of(Accelerator.HVF);
        }
        Path kvm = Path.of("/dev/kvm");
        if (Files.exists(kvm)) {
            return List.of(Accelerator.KVM);
        }
        return List.of();
    }

    /** Boots the probe under one accelerator; returns "works" or why not. */
    String probe(Accelerator accel, Path kernel, Path initramfs) {
        if (accel == Accelerator.KVM && !Files.isWritable(Path.of("/dev/kvm"))) {
            return "/dev/kvm is not writable by this user (add yourself to the kvm group)";
        }
        GuestArch arch = GuestArch.host(); // a probe asks what this host's own guests can use
        List<String> argv = List.of(qemu, "-M", arch.machine(null), "-accel", accel.qemuName(),
                "-cpu", arch.cpuModel(accel), "-m", "256M", "-smp", "1", "-nodefaults", "-no-user-config",
                "-display", "none", "-no-reboot", "-serial", "stdio",
                "-kernel", kernel.toString(), "-initrd", initramfs.toString(),
                "-append", "console=" + arch.consoleDevice() + " panic=-1 quiet kosa8.probe=1");
        Process p;
        try {
            p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        } catch (IOException e) {
            return "cannot start QEMU: " + e.getMessage();
        }
        CompletableFuture<Boolean> seen = new CompletableFuture<>();
        StringBuilder output = new StringBuilder();
        Thread.ofVirtual().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (output.length() < 8192) {
                        output.append(line).append('\n');
                    }
                    if (line.contains(MARKER)) {
                        seen.complete(true);
                    }
                }
            } catch (IOException ignored) {
                // the process is gone
            }
            seen.complete(false);
        });
        try {
            boolean ok = seen.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (ok) {
                return "works";
            }
            p.waitFor(2, TimeUnit.SECONDS);
            String last = output.toString().strip().lines().reduce((a, b) -> b).orElse("");
            return "QEMU exited" + (last.isEmpty() ? "" : ": " + last);
        } catch (java.util.concurrent.TimeoutException e) {
            return "the guest did not boot within " + timeout.toSeconds() + " s";
        } catch (Exception e) {
            return "probe failed: " + e.getMessage();
        } finally {
            p.destroyForcibly();
        }
    }

    private String cacheKey(Path kernel) {
        try {
            return qemu + "|" + kernel.toRealPath() + "|" + Files.size(kernel) + "|" + Files.exists(Path.of("/dev/kvm"));
        } catch (IOException e) {
            return qemu + "|" + kernel;
        }
    }

    private Choice readCache(String key) {
        try {
            JsonNode n = JSON.readTree(cacheFile.toFile());
            if (n != null && key.equals(n.path("key").asText())) {
                List<String> tried = new ArrayList<>();
                n.path("tried").forEach(t -> tried.add(t.asText()));
                return new Choice(Accelerator.parse(n.path("accelerator").asText()), tried, true);
            }
        } catch (IOException | RuntimeException e) {
            // no cache, or a stale one: probe again
        }
        return null;
    }

    private void writeCache(String key, Choice c) {
        try {
            Files.createDirectories(cacheFile.getParent());
            AtomicFile.writeHint(cacheFile, JSON.writeValueAsBytes(Map.of("key", key, "accelerator",
                    c.accelerator().name(), "tried", c.tried(), "probedAt", Instant.now().toString())));
        } catch (IOException e) {
            // an uncached result only costs another probe next time
        }
    }
}
