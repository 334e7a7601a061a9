package dev.kosa8.vm;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Watches the guest's console during boot for the lines that mean it will
 * never come up (the init's {@code KOSA8-INIT-FAILED:}, a kernel panic), so a
 * broken boot fails at once instead of after the whole boot timeout.
 */
final class BootWatch {
    private static final String[] FATAL = {"KOSA8-INIT-FAILED:", "Kernel panic"};
    private final Path console;
    private long checkedSize = -1;
    private boolean failed;

    BootWatch(Path console) {
        this.console = console;
    }

    boolean guestFailed() {
        if (failed) {
            return true;
        }
        try {
            long size = Files.size(console);
            if (size == checkedSize) {
                return false;
            }
            checkedSize = size;
            String tail = Tail.of(console, 50);
            for (String f : FATAL) {
                if (tail.contains(f)) {
                    failed = true;
                }
            }
        } catch (java.io.IOException e) {
            // no console yet
        }
        return failed;
    }
}
