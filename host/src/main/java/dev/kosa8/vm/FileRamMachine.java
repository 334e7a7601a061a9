package dev.kosa8.vm;

import java.io.IOException;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;

/**
 * A machine saved in file-RAM mode ({@link CheckpointMode#FILE_RAM}): its
 * RAM as a file, a copy of the file the guest ran in, and QEMU's migration
 * stream of everything else, saved with {@code x-ignore-shared} (the devices,
 * and the few small RAM blocks that are not the guest's memory: ACPI tables,
 * the BIOS). A restore copies {@code ram} into the new machine's memory file
 * before QEMU starts ({@link Vm#restore}), then loads {@code devices} with
 * {@code x-ignore-shared} on ({@link MachineState#load}).
 *
 * @param devices the migration stream without the guest's RAM
 * @param ram     the guest's RAM at the instant
 */
public record FileRamMachine(Path devices, Path ram) implements SavedMachine {
    @Override
    public void writeTo(WritableByteChannel out) throws IOException {
        SavedMachine.file(devices).writeTo(out);
    }

    @Override
    public String name() {
        return devices.getFileName().toString();
    }
}
