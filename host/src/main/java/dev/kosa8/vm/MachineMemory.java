package dev.kosa8.vm;

import dev.kosa8.host.KosaException;
import java.io.IOException;
import java.nio.file.Files;

/**
 * The file a machine keeps its RAM in ({@link CheckpointMode#FILE_RAM}), made ready before its QEMU starts and
 * maps it: empty and reserved for a boot, or the saved RAM copied in for a restore ({@link Vm}).
 */
final class MachineMemory {
    private MachineMemory() {
    }

    /** A machine about to boot, whose RAM is a file: an empty one, whatever an earlier machine left in it. */
    static void fresh(VmSpec spec) {
        if (spec.memoryFile() != null) {
            try {
                RamFile.fresh(spec.memoryFile());
                RamFile.reserve(spec.memoryFile(), (long) spec.memoryMiB() << 20);
            } catch (IOException e) {
                throw new KosaException(KosaException.Kind.HOST, "cannot make the file for the guest's memory: "
                        + e.getMessage(), "free space on the disk that holds " + spec.memoryFile(), e);
            }
        }
    }

    /**
     * A machine about to be restored, whose RAM is a file: the saved RAM copied into it for a state saved so
     * ({@link FileRamMachine}), else an empty file the stream fills.
     */
    static void forRestore(VmSpec spec, SavedMachine state) {
        if (spec.memoryFile() == null || !(state instanceof FileRamMachine f)) {
            fresh(spec);
            return;
        }
        try {
            Files.deleteIfExists(spec.memoryFile());
            RamFile.copy(f.ram(), spec.memoryFile());
            RamFile.reserve(spec.memoryFile(), (long) spec.memoryMiB() << 20);
        } catch (IOException e) {
            throw new KosaException(KosaException.Kind.VM, "cannot put the saved RAM " + f.ram().getFileName()
                    + " back: " + e.getMessage(), "free space on the disk that holds " + spec.memoryFile()
                    + "; the saved state is kept", e);
        }
    }
}
