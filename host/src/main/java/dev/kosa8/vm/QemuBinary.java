package dev.kosa8.vm;

import java.io.File;

/** Finds the QEMU system emulator for this host's architecture on PATH. */
public final class QemuBinary {
    private QemuBinary() {
    }

    public static String name() {
        String arch = System.getProperty("os.arch", "amd64");
        return arch.equals("aarch64") || arch.equals("arm64") ? "qemu-system-aarch64" : "qemu-system-x86_64";
    }

    /** The full path if found on PATH, else the bare name (starting it then fails with a clear message). */
    public static String find() {
        String name = name();
        String path = System.getenv().getOrDefault("PATH", "/usr/bin:/bin");
        for (String dir : path.split(File.pathSeparator)) {
            File f = new File(dir, name);
            if (f.canExecute()) {
                return f.getAbsolutePath();
            }
        }
        return name;
    }
}
