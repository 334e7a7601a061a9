package dev.kosa8.vm;

import java.io.File;

/** Finds the QEMU system emulator for a guest architecture (by default this host's) on PATH. */
public final class QemuBinary {
    private QemuBinary() {
    }

    /** The full path of the host architecture's emulator if found on PATH, else the bare name. */
    public static String find() {
        return find(GuestArch.host());
    }

    /**
     * The full path of {@code arch}'s emulator if found on PATH, else the bare name (starting it then fails with a
     * clear message).
     */
    public static String find(GuestArch arch) {
        String name = arch.qemuProgram();
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
